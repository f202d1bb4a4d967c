import Foundation
import Hummingbird
import Logging
import Optimization

/// Gives each request its `OptimizationRequest`, built from the visitor's signed state cookie,
/// and stores the visitor's state on the response.
///
/// **Before the handler.** Reads the state cookie through ``VisitorCookies`` (so only
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
        let found = cookies.stateIfPresent(cookieHeader: request.headers[values: .cookie].joined(separator: "; "))
        let state = found?.state ?? VisitorState()
        let rejected = found.map { !$0.opened } ?? false
        if rejected {
            context.logger.debug("visitor state cookie rejected (forged, tampered or expired): treated as a new visitor")
        }
        let optimization = OptimizationContext(
            request: service.forRequest(requestOptions(request, state, context)), visitorState: state, cookieRejected: rejected)
        var context = context
        context.optimization = optimization
        var response = try await next(request, context)
        let stored = optimization.responseVisitorState
        if stored != state { response.setCookie(cookies.cookie(for: stored)) }
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
    /// and persistence consent from the visitor's one choice, ``VisitorCookies/requestConsent(_:)``),
    /// profile id and handoff selections from the state, locale from the first language of
    /// `Accept-Language`, `page` (`url`, `path`, `search`) and `userAgent` as event context, and
    /// `requestId`. No IP address: add one only from a proxy you trust.
    /// - Parameters:
    ///   - request: the HTTP request.
    ///   - visitorState: the visitor's verified state.
    ///   - requestId: the request's id for log metadata; nil for none.
    public init(_ request: Request, visitorState: VisitorState, requestId: String? = nil) {
        self.init(
            consent: VisitorCookies.requestConsent(visitorState),
            profileId: visitorState.profileId,
            locale: Self.locale(request),
            eventContext: Self.eventContext(request),
            selectedOptimizations: visitorState.selections,
            requestId: requestId)
    }

    /// The first language of `Accept-Language` (`de-DE,de;q=0.9` → `de-DE`), or nil.
    static func locale(_ request: Request) -> String? {
        guard let header = request.headers[.acceptLanguage] else { return nil }
        let first = header.split(separator: ",").first?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces) ?? ""
        guard (2...35).contains(first.utf8.count), first != "*",
              first.utf8.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F })
        else { return nil }
        return first
    }

    /// `page` (url, path, query) and `userAgent`, merged under every event of the request.
    static func eventContext(_ request: Request) -> OrderedDictionary<String, JSONValue> {
        let path = request.uri.path
        let query = request.uri.query ?? ""
        let host = request.head.authority ?? "localhost"
        var page: OrderedDictionary<String, JSONValue> = [
            "url": .string("http://\(host)\(path)\(query.isEmpty ? "" : "?" + query)"),
            "path": .string(path),
        ]
        if !query.isEmpty { page["search"] = .string("?" + query) }
        var context: OrderedDictionary<String, JSONValue> = ["page": .object(page)]
        if let userAgent = request.headers[.userAgent] { context["userAgent"] = .string(userAgent) }
        return context
    }
}
