import HostPlatform
import Synchronization

/// One circuit breaker shared by concurrent callers of one API: the service's Experience calls
/// from every engine of its pool ask it before they send and report how it went.
///
/// Closed, it admits every call. After ``DeliveryPolicy/maxConsecutiveFailures`` consecutive
/// transient failures it opens for ``DeliveryPolicy/circuitOpenDuration`` (at least a reported
/// `Retry-After`); then the first caller is admitted as the probe and the others are refused until
/// the probe reports: a success closes the circuit, a failure re-opens it, a call that made no
/// request frees the way for the next caller.
///
/// **Threading.** Every method is safe from any thread and never blocks beyond a short lock.
/// Time is the injected clock's.
package final class DeliveryCircuit: Sendable {
    /// How an admitted call ended.
    package enum Report: Sendable, Equatable {
        /// The API answered.
        case answered
        /// A transient failure (a 408/429/5xx answer, a timeout, a transport error); counts
        /// towards opening the circuit.
        case transientFailure(retryAfterMilliseconds: Double?)
        /// No request was made, or the failure says nothing about the API's health (an
        /// overloaded profile, a refused or invalid call): frees the probe only.
        case neutral
    }

    private let policy: DeliveryPolicy
    private let clock: any HostClock
    private let state = Mutex(CircuitState())

    /// A closed circuit.
    /// - Parameters:
    ///   - policy: its thresholds (``DeliveryPolicy/maxConsecutiveFailures``,
    ///     ``DeliveryPolicy/circuitOpenDuration``).
    ///   - clock: the time its windows are measured on.
    package init(policy: DeliveryPolicy, clock: any HostClock) {
        self.policy = policy
        self.clock = clock
    }

    /// Whether a call may send its request now (see the type). An admitted call must
    /// ``record(_:)`` how it ended.
    package func admit() -> Bool {
        let now = clock.now()
        return state.withLock { $0.admit(now: now, policy: policy) }
    }

    /// Reports an admitted call.
    /// - Returns: whether the circuit is open now.
    @discardableResult
    package func record(_ report: Report) -> Bool {
        let now = clock.now()
        return state.withLock { state in
            switch report {
            case .answered: state.recordSuccess()
            case .transientFailure(let retryAfter): state.recordFailure(now: now, policy: policy, minimumOpenMilliseconds: retryAfter ?? 0)
            case .neutral: state.release()
            }
            return state.isOpen(now: now)
        }
    }

    /// Whether the circuit is open now (calls fail fast).
    package var isOpen: Bool {
        let now = clock.now()
        return state.withLock { $0.isOpen(now: now) }
    }

    /// Consecutive transient failures counted since the last answer.
    package var consecutiveFailures: Int {
        state.withLock { $0.consecutiveFailures }
    }
}
