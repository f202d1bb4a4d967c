import OptimizationDelivery

/// Errors of `OptimizationClient` and `OptimizationService`.
public enum OptimizationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The client has not been initialized (or was destroyed).
    case notInitialized
    /// The shared JavaScript core reported an error.
    case bridgeError(String)
    /// The embedded JavaScript could not be loaded.
    case resourceLoadError(String)
    /// The configuration is invalid.
    case configError(String)
    /// `OptimizationService/start(timeout:)` was called on a service that already started.
    case alreadyStarted
    /// `OptimizationService/start(timeout:)` did not finish within its deadline.
    case startTimedOut(String)
    /// The service was shut down: it accepts no more events.
    case shutDown
    /// The durable outbox could not store an accepted event (for example a full disk): the call
    /// failed, and the event was neither queued nor published.
    case eventNotStored(OutboxError)
    /// An Insights call (`trackView`, `trackClick`, `trackHover`, `trackFlagView`) on a request
    /// that has no profile id.
    case profileIdRequired(method: String)

    public var description: String {
        switch self {
        case .notInitialized: return "SDK not initialized. Call initialize() first."
        case .bridgeError(let message): return "JS Bridge error: \(message)"
        case .resourceLoadError(let message): return "Resource load error: \(message)"
        case .configError(let message): return "Config error: \(message)"
        case .alreadyStarted: return "The service has already been started."
        case .startTimedOut(let message): return "Start timed out: \(message)"
        case .shutDown: return "The service is shut down and accepts no more events."
        case .eventNotStored(let error): return "The event could not be stored: \(error)"
        case .profileIdRequired(let method):
            return "\(method) requires a request-bound profile id: pass the visitor's profile id to forRequest, or call identify/page/screen/track first."
        }
    }
}
