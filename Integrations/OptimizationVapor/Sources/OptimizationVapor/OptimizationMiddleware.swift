import Optimization
import Vapor

/// Gives each request its `OptimizationRequest` (`req.optimization`), built from the visitor's
/// signed state cookie, and stores the visitor's state on the response.
///
/// **Before the handler.** Reads the state cookie through the library's `VisitorCookies` (so only
/// `VisitorStateCodec` reads the value): a missing cookie, or one that is forged, tampered, signed
/// with another key or expired, is a new visitor (`VisitorState()`). Calls
/// `OptimizationService.forRequest(_:)` with the request's options (by default
/// `RequestOptions(_:visitorState:)`: consent, profile id and selections from the state, locale
/// from `Accept-Language`, URL and user agent as event context, Vapor's request id) and keeps the
/// library's `OptimizationRequestState` in the request's storage (`req.optimizationState`).
/// Nothing is sent: the handler makes the event calls.
///
/// **After the handler.** Adds the state cookie, sealed anew, when the state the response stores
/// (`OptimizationRequestState.responseVisitorState`: a state a handler stored, such as a consent
/// choice, or else the profile id and selections the request learned, only with the visitor's
/// consent) differs from what the visitor sent. Otherwise the response carries no cookie and
/// the browser keeps the one it has. A handler that throws gets no cookie.
///
/// **Configuration.** The service and cookies are `app.optimization`'s
/// (`Application.Optimization.configure(service:cookies:startTimeout:requestOptions:)`); before it
/// is configured every request through the middleware fails with
/// ``OptimizationVaporError/notConfigured`` (500).
///
/// **Logging.** At debug level only, and never the cookie, profile id or selections.
///
/// **Threading.** An immutable `Sendable` value; Vapor calls it concurrently for concurrent
/// requests.
public struct OptimizationMiddleware: AsyncMiddleware {
    /// Makes a request's options from the HTTP request and the visitor's verified state.
    public typealias RequestOptionsProvider = @Sendable (_ request: Request, _ visitorState: VisitorState) -> RequestOptions

    /// A middleware with `app.optimization`'s service, cookies and request options.
    public init() {}

    /// Prepares `req.optimization`, runs the rest of the chain, then stores the visitor's state on
    /// the response (see the type's contract).
    /// - Throws: ``OptimizationVaporError/notConfigured`` before `app.optimization` is configured;
    ///   whatever the rest of the chain throws.
    public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard let configuration = request.application.optimization.configuration else {
            throw OptimizationVaporError.notConfigured
        }
        let options = configuration.requestOptions ?? { request, visitorState in RequestOptions(request, visitorState: visitorState) }
        let state = OptimizationRequestState(
            service: configuration.service, cookies: configuration.cookies,
            cookieHeader: request.headers[.cookie].joined(separator: "; "), logger: request.logger
        ) { visitorState in options(request, visitorState) }
        request.setOptimizationState(state)
        let response = try await next.respond(to: request)
        if let header = state.setCookieHeader(with: configuration.cookies) {
            response.headers.add(name: .setCookie, value: header)
        }
        return response
    }
}

extension RequestOptions {
    /// The options of a Vapor request of a visitor in `visitorState` (the library's
    /// `RequestOptions(visitorState:host:path:query:acceptLanguage:userAgent:requestId:)` with
    /// the request's `Host`, path, query, `Accept-Language`, `User-Agent` and `req.id`): consent,
    /// profile id and handoff selections from the state, locale, page and user agent as event
    /// context. No IP address: add one only from a proxy you trust. Pure.
    public init(_ request: Request, visitorState: VisitorState) {
        self.init(
            visitorState: visitorState, host: request.headers.first(name: .host), path: request.url.path,
            query: request.url.query, acceptLanguage: request.headers.first(name: .acceptLanguage),
            userAgent: request.headers.first(name: .userAgent), requestId: request.id)
    }
}
