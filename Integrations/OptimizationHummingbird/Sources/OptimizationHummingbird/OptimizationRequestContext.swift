import Hummingbird
import Optimization
import Synchronization

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

/// The simplest ``OptimizationRequestContext``: Hummingbird's basic context plus ``optimization``.
/// One per request, as every Hummingbird context.
public struct BasicOptimizationRequestContext: OptimizationRequestContext {
    /// Hummingbird's per-request storage (logger, parameters, endpoint).
    public var coreContext: CoreRequestContextStorage
    /// The visitor's Optimization request and state (set by ``OptimizationMiddleware``).
    public var optimization: OptimizationContext

    /// A context for a request arriving from `source`, before any middleware.
    public init(source: Source) {
        coreContext = .init(source: source)
        optimization = OptimizationContext()
    }
}

/// What ``OptimizationMiddleware`` knows about the visitor of one request: its
/// `OptimizationRequest` (``request``), the state its cookie carried (``visitorState``), and the
/// state the response stores (``responseVisitorState``, or one a handler gives to ``store(_:)``).
///
/// **Threading.** A `Sendable` value; copies share the state given to ``store(_:)``, which is
/// guarded by a lock, so handlers may call it from any task of the request.
public struct OptimizationContext: Sendable {
    /// Set by the middleware.
    struct Prepared: Sendable {
        let request: OptimizationRequest
        let visitorState: VisitorState
        let cookieRejected: Bool
    }

    /// A state a handler stored, shared by every copy of the context.
    final class StoredState: Sendable {
        let value = Mutex<VisitorState?>(nil)
    }

    let prepared: Prepared?
    let stored: StoredState

    /// An empty context: what a request context starts with, before ``OptimizationMiddleware``.
    public init() {
        prepared = nil
        stored = StoredState()
    }

    init(request: OptimizationRequest, visitorState: VisitorState, cookieRejected: Bool) {
        prepared = Prepared(request: request, visitorState: visitorState, cookieRejected: cookieRejected)
        stored = StoredState()
    }

    /// The visitor's request of the `OptimizationService`: consent, profile id and handoff
    /// selections from the state cookie, locale, event context and request id from the HTTP
    /// request (``OptimizationMiddleware``). Call its event and resolve methods in the handler.
    /// - Throws: an `HTTPError` with status 500 when ``OptimizationMiddleware`` did not run for
    ///   this route (it must be added to the router or group before the route).
    public var request: OptimizationRequest {
        get throws {
            guard let prepared else {
                throw HTTPError(.internalServerError, message: "OptimizationMiddleware is not installed for this route")
            }
            return prepared.request
        }
    }

    /// True once ``OptimizationMiddleware`` has prepared this context.
    public var isPrepared: Bool { prepared != nil }

    /// The state the visitor's cookie carried: a new visitor's (`VisitorState()`) when there was
    /// none, or when it was forged, tampered, signed with another key or expired (see
    /// ``cookieWasRejected``). `VisitorState()` before the middleware runs.
    public var visitorState: VisitorState { prepared?.visitorState ?? VisitorState() }

    /// True when the request carried a state cookie that did not open (forged, tampered, signed
    /// with another key or expired): the visitor is treated as new.
    public var cookieWasRejected: Bool { prepared?.cookieRejected ?? false }

    /// Replaces the state the response stores: the middleware writes `state` into the cookie
    /// (when it differs from ``visitorState``, what the visitor sent) instead of deriving it from
    /// the request. Use it when the visitor's choice changes (consent) or to store less than the
    /// request learned. The last call wins.
    public func store(_ state: VisitorState) {
        stored.value.withLock { $0 = state }
    }

    /// The state given to ``store(_:)``, if any.
    public var storedVisitorState: VisitorState? {
        stored.value.withLock { $0 }
    }

    /// The state the response stores, as of now: the one given to ``store(_:)`` when there is one;
    /// otherwise ``visitorState`` with, when the request may persist the profile
    /// (`OptimizationRequest.canPersistProfile`, the visitor consented), the profile id and
    /// selections the request holds now (after its Experience calls).
    public var responseVisitorState: VisitorState {
        if let stored = storedVisitorState { return stored }
        guard let prepared else { return VisitorState() }
        var next = prepared.visitorState
        let request = prepared.request
        if request.canPersistProfile {
            if let id = request.profileId { next.profileId = id }
            if let selections = request.selectedOptimizations { next.selections = selections }
        }
        return next
    }
}
