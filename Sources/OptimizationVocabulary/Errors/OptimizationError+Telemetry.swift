extension OptimizationError {
    /// The error's value of `error.type` on a span: its case, in snake case (`shut_down`,
    /// `profile_id_required`, `bridge_error`, …); never its message.
    package var telemetryName: String {
        switch self {
        case .notInitialized: return "not_initialized"
        case .bridgeError: return "bridge_error"
        case .resourceLoadError: return "resource_load_error"
        case .configError: return "config_error"
        case .alreadyStarted: return "already_started"
        case .startTimedOut: return "start_timed_out"
        case .shutDown: return "shut_down"
        case .eventNotStored: return "event_not_stored"
        case .profileIdRequired: return "profile_id_required"
        }
    }
}
