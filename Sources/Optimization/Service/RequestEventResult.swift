/// The result of one event call of an ``OptimizationRequest``.
public struct RequestEventResult: Sendable, Equatable {
    /// False when consent blocked the call (nothing was sent; it was reported on
    /// ``OptimizationService/blockedEvents``).
    public var accepted: Bool
    /// How the Experience API call went; nil for calls that make none (Insights-only calls and
    /// blocked calls).
    public var experience: ExperienceOutcome?
    /// The request's profile after the call (the Experience API's answer on success, else what
    /// the request had).
    public var profile: JSONValue?
    /// The request's current selections after the call (see ``OptimizationRequest/selectedOptimizations``).
    public var selectedOptimizations: SelectedOptimizations?
    /// The request's current flag changes after the call.
    public var changes: [JSONValue]?

    /// Creates a result.
    /// - Parameters:
    ///   - accepted: false when consent blocked the call.
    ///   - experience: how the Experience API call went; nil (the default) when none was made.
    ///   - profile: the request's profile after the call.
    ///   - selectedOptimizations: the request's current selections after the call.
    ///   - changes: the request's current flag changes after the call.
    public init(
        accepted: Bool, experience: ExperienceOutcome? = nil, profile: JSONValue? = nil,
        selectedOptimizations: SelectedOptimizations? = nil, changes: [JSONValue]? = nil
    ) {
        self.accepted = accepted
        self.experience = experience
        self.profile = profile
        self.selectedOptimizations = selectedOptimizations
        self.changes = changes
    }
}

/// How one Experience API call of a request went. Anything but ``success`` leaves the request
/// with the selections it had (the handoff selections it was created with, or baselines): the
/// page still renders, promptly.
public enum ExperienceOutcome: Sendable, Equatable, CustomStringConvertible {
    /// The API answered; the request now has the visitor's profile, selections and changes.
    case success
    /// The request's latency budget ran out first: the HTTP request was cancelled and its
    /// connection closed, and a late answer is never applied.
    case timedOut(milliseconds: Int)
    /// The service's Experience circuit is open after repeated failures: no request was made.
    case circuitOpen
    /// A transient failure: a 408/429/5xx answer (status) or a transport error (status 0).
    case failed(status: Int, reason: String)
    /// The API refused the call (another 4xx; 401/403/404 mean a wrong client id, environment or
    /// base URL) or answered something that is not an Experience response.
    case refused(status: Int, reason: String)

    public var description: String {
        switch self {
        case .success: return "success"
        case .timedOut(let milliseconds): return "timed out after \(milliseconds) ms"
        case .circuitOpen: return "circuit open"
        case .failed(let status, let reason): return "failed (\(status)): \(reason)"
        case .refused(let status, let reason): return "refused (\(status)): \(reason)"
        }
    }

    /// Whether this outcome counts as a failure for the circuit breaker.
    var isTransientFailure: Bool {
        switch self {
        case .timedOut, .failed: return true
        case .success, .circuitOpen, .refused: return false
        }
    }
}
