import JavaScriptHost
import Synchronization

/// The service-wide circuit breaker of Experience API calls: after `maximumConsecutiveFailures`
/// transient failures in a row (timeouts, 408/429/5xx, transport errors) it opens for
/// `openMilliseconds` on the service clock, and calls fail fast instead of each waiting for its
/// budget. After that window one call at a time is let through; a success closes the circuit, a
/// failure re-opens it. Uses the delivery queues' settings (``QueueFlushPolicy``). Thread-safe.
final class ExperienceCircuitBreaker: Sendable {
    private struct State {
        var consecutiveFailures = 0
        var openUntil: Double = 0
        var probing = false
    }

    private let state = Mutex(State())
    private let clock: any HostClock
    let maximumConsecutiveFailures: Int
    let openMilliseconds: Double

    init(clock: any HostClock, maximumConsecutiveFailures: Int, openMilliseconds: Double) {
        self.clock = clock
        self.maximumConsecutiveFailures = max(1, maximumConsecutiveFailures)
        self.openMilliseconds = max(0, openMilliseconds)
    }

    /// True when a call must fail fast now. Once the open window has passed, the first caller
    /// gets false (the probe); others keep failing fast until the probe reports.
    func shouldFailFast() -> Bool {
        let now = clock.now()
        return state.withLock { state in
            guard state.consecutiveFailures >= maximumConsecutiveFailures else { return false }
            if now < state.openUntil || state.probing { return true }
            state.probing = true
            return false
        }
    }

    /// Records the outcome of a call ``shouldFailFast()`` let through; nil when that call ended
    /// without an Experience request (blocked by consent, invalid), which frees the probe.
    func record(_ outcome: ExperienceOutcome?) {
        let now = clock.now()
        state.withLock { state in
            state.probing = false
            guard let outcome else { return }
            if outcome.isTransientFailure {
                state.consecutiveFailures += 1
                if state.consecutiveFailures >= maximumConsecutiveFailures { state.openUntil = now + openMilliseconds }
            } else if outcome == .success {
                state.consecutiveFailures = 0
                state.openUntil = 0
            }
        }
    }

    /// Whether the circuit is open now (for metrics and tests).
    var isOpen: Bool {
        let now = clock.now()
        return state.withLock { $0.consecutiveFailures >= maximumConsecutiveFailures && now < $0.openUntil }
    }
}
