extension EventOutcome {
    /// The outcome's value of `optimization.outcome` on an `optimization.request` span:
    /// `accepted`, `delivered`, `blocked`, `refused`, `timeout`, `circuit_open`, `failed`.
    package var telemetryName: String {
        switch self {
        case .accepted: return "accepted"
        case .delivered: return "delivered"
        case .blocked: return "blocked"
        case .refused: return "refused"
        case .timedOut: return "timeout"
        case .circuitOpen: return "circuit_open"
        case .failed: return "failed"
        }
    }
}
