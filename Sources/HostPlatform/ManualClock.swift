import Foundation

/// A ``HostClock`` that only moves when told to: for deterministic tests of timers, dwell,
/// backoff and flush intervals.
///
/// ``advance(by:)`` moves time forward and runs every timer that falls due, in due order (ties in
/// scheduling order), synchronously on the calling thread, with `now()` equal to each timer's
/// due time while it runs. Timers scheduled by a running action are honoured in the same call if
/// they fall due before the target time. Thread-safe.
public final class ManualClock: HostClock, @unchecked Sendable {
    private struct Pending {
        let due: Double
        let sequence: Int
        let action: @Sendable () -> Void
    }

    private let lock = NSLock()
    private var current: Double
    private var sequence = 0
    private var pending: [Int: Pending] = [:]

    /// - Parameter start: the initial time in milliseconds since the Unix epoch
    ///   (default 2026-01-01T00:00:00Z).
    public init(start: Double = 1_767_225_600_000) {
        current = start
    }

    public func now() -> Double {
        lock.withLock { current }
    }

    /// Number of timers scheduled and neither fired nor cancelled.
    public var pendingTimerCount: Int {
        lock.withLock { pending.count }
    }

    /// Due time of the earliest pending timer, if any.
    public var nextDueTime: Double? {
        lock.withLock { pending.values.map(\.due).min() }
    }

    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any HostTimer {
        let delay = max(0, delay.inMilliseconds)
        return lock.withLock {
            sequence += 1
            pending[sequence] = Pending(due: current + delay, sequence: sequence, action: action)
            return Timer(clock: self, id: sequence)
        }
    }

    /// Moves time forward by `duration` (negative counts as zero), firing due timers in order.
    public func advance(by duration: Duration) {
        let milliseconds = duration.inMilliseconds
        let target = lock.withLock { current + max(0, milliseconds) }
        while let next = takeNextDue(upTo: target) {
            next.action()
        }
        lock.withLock { current = max(current, target) }
    }

    /// Fires every timer due at the current time without moving it.
    public func runDueTimers() {
        advance(by: .zero)
    }

    private func takeNextDue(upTo target: Double) -> Pending? {
        lock.withLock {
            guard let next = pending.values.min(by: { ($0.due, $0.sequence) < ($1.due, $1.sequence) }),
                  next.due <= target
            else { return nil }
            pending[next.sequence] = nil
            current = max(current, next.due)
            return next
        }
    }

    fileprivate func cancel(id: Int) {
        lock.withLock { _ = pending.removeValue(forKey: id) }
    }

    private struct Timer: HostTimer {
        let clock: ManualClock
        let id: Int
        func cancel() { clock.cancel(id: id) }
    }
}
