import Hummingbird
import NIOCore
import Optimization

/// A Hummingbird request context that carries the visitor's ``OptimizationContext``: the
/// `OptimizationRequest` that ``OptimizationMiddleware`` builds from the visitor's signed state
/// cookie, and the state the response stores.
///
/// Conform your own context by adding one stored property initialized to `OptimizationContext()`,
/// or use ``BasicOptimizationRequestContext``:
///
/// ```swift
/// struct AppRequestContext: OptimizationRequestContext {
///     var coreContext: CoreRequestContextStorage
///     var optimization = OptimizationContext()
///     init(source: Source) { coreContext = .init(source: source) }
/// }
/// ```
public protocol OptimizationRequestContext: RequestContext {
    /// The visitor's Optimization request and state; set by ``OptimizationMiddleware``, empty
    /// (`OptimizationContext()`) before it runs.
    var optimization: OptimizationContext { get set }
}

/// The simplest ``OptimizationRequestContext``: Hummingbird's basic context plus ``optimization``
/// and the connection's ``remoteAddress`` (a `RemoteAddressRequestContext`). One per request, as
/// every Hummingbird context.
public struct BasicOptimizationRequestContext: OptimizationRequestContext, RemoteAddressRequestContext {
    /// Hummingbird's per-request storage (logger, parameters, endpoint).
    public var coreContext: CoreRequestContextStorage
    /// The visitor's Optimization request and state (set by ``OptimizationMiddleware``).
    public var optimization: OptimizationContext
    /// The address of the connection's peer (a proxy's, behind one); nil when unknown.
    public let remoteAddress: SocketAddress?

    /// A context for a request arriving from `source`, before any middleware.
    public init(source: Source) {
        coreContext = .init(source: source)
        optimization = OptimizationContext()
        remoteAddress = source.channel.remoteAddress
    }
}

/// What ``OptimizationMiddleware`` knows about the visitor of one request: its
/// `OptimizationRequest` (``request``), the state its cookie carried (``visitorState``), and the
/// state the response stores (``responseVisitorState``, or one a handler gives to ``store(_:)``).
/// A Hummingbird face of the library's `OptimizationRequestState` (``state``).
///
/// **Threading.** A `Sendable` value; copies share the state given to ``store(_:)``, which is
/// guarded by a lock, so handlers may call it from any task of the request.
public struct OptimizationContext: Sendable {
    /// The library's state of this request, set by the middleware; nil before it runs.
    public let state: OptimizationRequestState?

    /// An empty context: what a request context starts with, before ``OptimizationMiddleware``.
    public init() {
        state = nil
    }

    /// A context prepared with `state` (what ``OptimizationMiddleware`` does).
    public init(state: OptimizationRequestState) {
        self.state = state
    }

    /// The visitor's request of the `OptimizationService`: consent, profile id and handoff
    /// selections from the state cookie, locale, event context and request id from the HTTP
    /// request (``OptimizationMiddleware``). Call its event and resolve methods in the handler.
    /// - Throws: an `HTTPError` with status 500 when ``OptimizationMiddleware`` did not run for
    ///   this route (it must be added to the router or group before the route).
    public var request: OptimizationRequest {
        get throws {
            guard let state else {
                throw HTTPError(.internalServerError, message: "OptimizationMiddleware is not installed for this route")
            }
            return state.request
        }
    }

    /// True once ``OptimizationMiddleware`` has prepared this context.
    public var isPrepared: Bool { state != nil }

    /// The state the visitor's cookie carried: a new visitor's (`VisitorState()`) when there was
    /// none, or when it was forged, tampered, signed with another key or expired (see
    /// ``cookieWasRejected``). `VisitorState()` before the middleware runs.
    public var visitorState: VisitorState { state?.visitorState ?? VisitorState() }

    /// True when the request carried a state cookie that did not open (forged, tampered, signed
    /// with another key or expired): the visitor is treated as new.
    public var cookieWasRejected: Bool { state?.cookieWasRejected ?? false }

    /// Replaces the state the response stores: the middleware writes `state` into the cookie
    /// (when it differs from ``visitorState``, what the visitor sent) instead of deriving it from
    /// the request. Use it when the visitor's choice changes (consent) or to store less than the
    /// request learned. The last call wins; before the middleware runs it does nothing.
    public func store(_ state: VisitorState) {
        self.state?.store(state)
    }

    /// The state given to ``store(_:)``, if any.
    public var storedVisitorState: VisitorState? { state?.storedVisitorState }

    /// The state the response stores, as of now: the one given to ``store(_:)`` when there is one;
    /// otherwise ``visitorState`` with, when the request may persist the profile
    /// (`OptimizationRequest.canPersistProfile`, the visitor consented), the profile id and
    /// selections the request holds now (after its Experience calls). `VisitorState()` before the
    /// middleware runs.
    public var responseVisitorState: VisitorState { state?.responseVisitorState ?? VisitorState() }
}
