import JavaScriptHost
import Synchronization

/// The service-wide circuit breaker of Experience API calls: after `maximumConsecutiveFailures`
/// transient failures in a row (timeouts, 408/429/5xx, transport errors) it opens for
/// `openMilliseconds` on the service clock, and calls fail fast instead of each waiting for its
/// budget. After that window one call at a time is let through; a success closes the circuit, a
/// failure re-opens it. Its thresholds are the delivery queues' (``QueueFlushPolicy``), resolved
/// by the shared core (`core/queue-flush-policy.js`, where the defaults are stated) when the
/// service starts: ``configure(maximumConsecutiveFailures:openMilliseconds:)``. Until then it
/// never opens. Thread-safe.
final class ExperienceCircuitBreaker: Sendable {
    private struct State {
        var consecutiveFailures = 0
        var openUntil: Double = 0
        var probing = false
        var maximumConsecutiveFailures = Int.max
        var openMilliseconds: Double = 0
    }

    private let state = Mutex(State())
    private let clock: any HostClock

    init(clock: any HostClock) {
        self.clock = clock
    }

    /// Sets the thresholds (the policy the shared core resolved).
    func configure(maximumConsecutiveFailures: Int, openMilliseconds: Double) {
        state.withLock { state in
            state.maximumConsecutiveFailures = max(1, maximumConsecutiveFailures)
            state.openMilliseconds = max(0, openMilliseconds)
        }
    }

    /// The failures in a row that open the circuit.
    var maximumConsecutiveFailures: Int { state.withLock { $0.maximumConsecutiveFailures } }
    /// How long the circuit stays open, in milliseconds.
    var openMilliseconds: Double { state.withLock { $0.openMilliseconds } }

    /// True when a call must fail fast now. Once the open window has passed, the first caller
    /// gets false (the probe); others keep failing fast until the probe reports.
    func shouldFailFast() -> Bool {
        let now = clock.now()
        return state.withLock { state in
            guard state.consecutiveFailures >= state.maximumConsecutiveFailures else { return false }
            if now < state.openUntil || state.probing { return true }
            state.probing = true
            return false
        }
    }

    /// Records the outcome of a call ``shouldFailFast()`` let through; nil when that call ended
    /// without an Experience request (blocked by consent, invalid), which frees the probe.
    func record(_ outcome: EventOutcome?) {
        let now = clock.now()
        state.withLock { state in
            state.probing = false
            guard let outcome else { return }
            if outcome.isTransientExperienceFailure {
                state.consecutiveFailures += 1
                if state.consecutiveFailures >= state.maximumConsecutiveFailures { state.openUntil = now + state.openMilliseconds }
            } else if outcome == .delivered {
                state.consecutiveFailures = 0
                state.openUntil = 0
            }
        }
    }

    /// Whether the circuit is open now (for metrics and tests).
    var isOpen: Bool {
        let now = clock.now()
        return state.withLock { $0.consecutiveFailures >= $0.maximumConsecutiveFailures && now < $0.openUntil }
    }
}

extension EventOutcome {
    /// Whether this outcome of an Experience call counts as a failure for the circuit breaker.
    var isTransientExperienceFailure: Bool {
        switch self {
        case .timedOut, .failed: return true
        case .accepted, .delivered, .blocked, .refused, .circuitOpen: return false
        }
    }
}
