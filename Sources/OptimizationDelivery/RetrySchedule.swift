import HostPlatform
import OptimizationJSON
import OrderedCollections

/// When a delivery queue may send again: its failures in a row and circuit, the wait after a
/// failure and the timer that retries after it. One value per queue, in its
/// ``DeliveryQueueCore`` (guarded by the queue's lock); every rule of retrying lives here.
///
/// After a failure the next flush waits the backoff for the failures so far
/// (``DeliveryPolicy/retryDelayMilliseconds(consecutiveFailures:random:)``), at least the
/// server's `Retry-After`; at ``DeliveryPolicy/maxConsecutiveFailures`` the circuit opens for
/// ``DeliveryPolicy/circuitOpenDuration`` (or the `Retry-After`, when longer). While a wait runs
/// or the circuit is open ``allowsFlush(now:)`` is false, whoever asks.
struct RetrySchedule: Sendable {
    private(set) var circuit = CircuitState()
    /// Milliseconds since the epoch before which no flush may start (0: none is waiting).
    private(set) var nextFlushAllowedAt: Double = 0
    private var retryTimer: (any HostTimer)?

    /// What one failure decided, for the queue's reports.
    struct Failure {
        var consecutiveFailures: Int
        /// The backoff (at least the `Retry-After`), in milliseconds.
        var retryDelay: Double
        /// Whether this failure opened the circuit.
        var openedCircuit: Bool
        /// How long nothing is sent: the backoff, or the circuit's window.
        var wait: Double
    }

    /// Whether a flush may start now: no wait runs and the circuit is closed.
    func allowsFlush(now: Double) -> Bool {
        now >= nextFlushAllowedAt && !circuit.isOpen(now: now)
    }

    func isCircuitOpen(now: Double) -> Bool {
        circuit.isOpen(now: now)
    }

    /// Counts a failure and schedules `retry` after its wait (replacing a scheduled one).
    /// - Parameter retryAfter: the server's `Retry-After` in milliseconds, if any.
    mutating func recordFailure(
        now: Double, retryAfter: Double?, policy: DeliveryPolicy, random: Double, clock: any HostClock,
        retry: @escaping @Sendable () -> Void
    ) -> Failure {
        let minimum = max(0, (retryAfter ?? 0).rounded(.up))
        let opened = circuit.recordFailure(now: now, policy: policy, minimumOpenMilliseconds: minimum)
        let failures = circuit.consecutiveFailures
        let delay = max(policy.retryDelayMilliseconds(consecutiveFailures: failures, random: random), minimum)
        let wait = opened ? max(policy.circuitOpenDuration.inMilliseconds, minimum) : delay
        nextFlushAllowedAt = now + wait
        retryTimer?.cancel()
        retryTimer = clock.schedule(after: .milliseconds(wait), retry)
        return Failure(consecutiveFailures: failures, retryDelay: delay, openedCircuit: opened, wait: wait)
    }

    /// A flush the API answered: the circuit closes, the wait and the retry end.
    /// - Returns: the context of the `flushRecovered` report after failures; nil after none.
    mutating func recordSuccess() -> OrderedDictionary<String, JSONValue>? {
        cancelRetry()
        nextFlushAllowedAt = 0
        let previous = circuit.recordSuccess()
        return previous > 0 ? ["consecutiveFailures": .number(JSONNumber(previous))] : nil
    }

    /// The network came back: the wait and the retry end; the circuit stays as it is.
    mutating func endWait() {
        cancelRetry()
        nextFlushAllowedAt = 0
    }

    /// Forgets everything (purge, close).
    mutating func reset() {
        cancelRetry()
        nextFlushAllowedAt = 0
        circuit = CircuitState()
    }

    /// Cancels the scheduled retry (nothing left to send); the wait stays.
    mutating func cancelRetry() {
        retryTimer?.cancel()
        retryTimer = nil
    }

    /// The retry timer fired: it is no longer scheduled.
    mutating func retryFired() {
        retryTimer = nil
    }
}

extension RetrySchedule.Failure {
    /// The contexts of the `flushFailure` report and, when the circuit opened, the `circuitOpen`
    /// one (`retryDelayMs` the circuit's window there).
    func reportContexts(queuedBatches: Int, queuedEvents: Int) -> [(QueueEventType, OrderedDictionary<String, JSONValue>)] {
        let counts: OrderedDictionary<String, JSONValue> = [
            "consecutiveFailures": .number(JSONNumber(consecutiveFailures)), "queuedBatches": .number(JSONNumber(queuedBatches)),
            "queuedEvents": .number(JSONNumber(queuedEvents)),
        ]
        var failure = counts
        failure["retryDelayMs"] = .number(JSONNumber(Int(retryDelay)))
        guard openedCircuit else { return [(.flushFailure, failure)] }
        var open = counts
        open["retryDelayMs"] = .number(JSONNumber(Int(wait)))
        return [(.flushFailure, failure), (.circuitOpen, open)]
    }
}
