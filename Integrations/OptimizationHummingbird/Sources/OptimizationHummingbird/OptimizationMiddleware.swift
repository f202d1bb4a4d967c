import Hummingbird
import HTTPTypes
import Logging
import Optimization

/// Gives each request its `OptimizationRequest`, built from the visitor's signed state cookie,
/// and stores the visitor's state on the response.
///
/// **Before the handler.** Reads the state cookie through the library's `VisitorCookies` (so only
/// `VisitorStateCodec` reads the value): a missing cookie, or one that is forged, tampered, signed
/// with another key or expired, is a new visitor (`VisitorState()`). Calls
/// `OptimizationService.forRequest(_:)` with the request's options (by default
/// `RequestOptions(_:visitorState:requestId:)`: consent, profile id and selections from the
/// state, locale from `Accept-Language`, URL and user agent as event context, Hummingbird's
/// request id) and puts the request and the state into `context.optimization`
/// (``OptimizationContext``). Nothing is sent: the handler makes the event calls.
///
/// **After the handler.** Writes the state cookie, sealed anew, when
/// ``OptimizationContext/responseVisitorState`` differs from the state the visitor sent: the
/// state a handler gave to ``OptimizationContext/store(_:)`` (a consent choice), or else the
/// profile id and selections the request learned (only with the visitor's consent). Otherwise
/// the response carries no cookie and the browser keeps the one it has: expiry does not slide
/// with each visit. A handler that throws gets no cookie.
///
/// **Logging.** At debug level only, and never the cookie, profile id or selections.
///
/// **Threading.** An immutable `Sendable` value; Hummingbird calls it concurrently for
/// concurrent requests. The service must be running (``Hummingbird/Application/addOptimizationService(_:startTimeout:)``)
/// before the handlers make event calls.
public struct OptimizationMiddleware<Context: OptimizationRequestContext>: RouterMiddleware {
    /// Makes a request's options from the HTTP request, the visitor's state and the context.
    public typealias RequestOptionsProvider = @Sendable (_ request: Request, _ visitorState: VisitorState, _ context: Context) -> RequestOptions

    /// The service each request is created with.
    public let service: OptimizationService
    /// Reads and writes the visitor's state cookie.
    public let cookies: VisitorCookies
    private let requestOptions: RequestOptionsProvider

    /// - Parameters:
    ///   - service: the service that creates each visitor's `OptimizationRequest`.
    ///   - cookies: reads and writes the visitor's sealed state cookie.
    ///   - requestOptions: the options of each request; nil (the default) uses
    ///     `RequestOptions(request, visitorState: state, requestId: <Hummingbird's request id>)`.
    ///     Start from that one to add, for example, the visitor's IP address when a trusted proxy
    ///     gives it.
    public init(service: OptimizationService, cookies: VisitorCookies, requestOptions: RequestOptionsProvider? = nil) {
        self.service = service
        self.cookies = cookies
        self.requestOptions = requestOptions ?? { request, state, context in
            RequestOptions(request, visitorState: state, requestId: Self.requestId(of: context))
        }
    }

    /// Prepares `context.optimization`, runs the rest of the chain, then stores the visitor's
    /// state on the response (see the type's contract).
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let state = OptimizationRequestState(
            service: service, cookies: cookies, cookieHeader: request.headers[values: .cookie].joined(separator: "; "),
            logger: context.logger
        ) { visitorState in requestOptions(request, visitorState, context) }
        var context = context
        context.optimization = OptimizationContext(state: state)
        var response = try await next(request, context)
        if let setCookie = state.setCookieHeader(with: cookies) { response.headers.append(HTTPField(name: .setCookie, value: setCookie)) }
        return response
    }

    /// Hummingbird's request id (from the request logger's metadata: `context.id` traps when the
    /// log handler keeps no metadata, as the no-op handler does), or nil.
    static func requestId(of context: Context) -> String? {
        context.logger[metadataKey: "hb.request.id"]?.description
    }
}

extension RequestOptions {
    /// The options of a Hummingbird request of a visitor in `visitorState`: consent (both event
    /// and persistence consent from the visitor's one choice, `VisitorCookies.requestConsent(_:)`),
    /// profile id and handoff selections from the state, locale from the first language of
    /// `Accept-Language`, `page` (`url`, `path`, `search`) and `userAgent` as event context, and
    /// `requestId`. No IP address: add one only from a proxy you trust.
    /// - Parameters:
    ///   - request: the HTTP request.
    ///   - visitorState: the visitor's verified state.
    ///   - requestId: the request's id for log metadata; nil for none.
    public init(_ request: Request, visitorState: VisitorState, requestId: String? = nil) {
        self.init(
            visitorState: visitorState, host: request.head.authority, path: request.uri.path, query: request.uri.query,
            acceptLanguage: request.headers[.acceptLanguage], userAgent: request.headers[.userAgent], requestId: requestId)
    }
}
