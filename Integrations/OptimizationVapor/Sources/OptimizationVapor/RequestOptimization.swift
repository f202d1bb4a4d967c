import Optimization
import Vapor

extension Request {
    private struct OptimizationStateKey: StorageKey {
        typealias Value = OptimizationRequestState
    }

    /// The visitor's request of the `OptimizationService`, bound to this HTTP request:
    /// consent, profile id and handoff selections from the visitor's state cookie, locale, event
    /// context and request id from the request. Call its event and resolve methods in the handler.
    /// - Throws: ``OptimizationVaporError/middlewareNotInstalled`` (500) when
    ///   ``OptimizationMiddleware`` did not run for this route.
    public var optimization: OptimizationRequest {
        get throws(OptimizationVaporError) { try optimizationState.request }
    }

    /// The library's state of this request: ``optimization``, the state the visitor's cookie
    /// carried (`visitorState`), and the state the response stores (`responseVisitorState`, or
    /// one given to `store(_:)`).
    /// - Throws: ``OptimizationVaporError/middlewareNotInstalled`` (500) when
    ///   ``OptimizationMiddleware`` did not run for this route.
    public var optimizationState: OptimizationRequestState {
        get throws(OptimizationVaporError) {
            guard let state = storage[OptimizationStateKey.self] else { throw .middlewareNotInstalled }
            return state
        }
    }

    /// Set by ``OptimizationMiddleware``.
    func setOptimizationState(_ state: OptimizationRequestState) {
        storage[OptimizationStateKey.self] = state
    }
}
