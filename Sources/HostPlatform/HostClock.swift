import Dispatch
import Foundation

/// The source of time and timers for everything a `JavaScriptEngine` schedules.
///
/// Every timer of the hosted JavaScript (`setTimeout`, flush intervals, backoff, dwell) runs on
/// this clock, so tests inject a ``ManualClock`` and never sleep.
public protocol HostClock: Sendable {
    /// Milliseconds since the Unix epoch.
    func now() -> Double
    /// Runs `action` once, `delay` from now (negative counts as zero), on a thread of the clock's
    /// choosing, unless the returned timer is cancelled first.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any HostTimer
}

/// A scheduled action of a ``HostClock``.
public protocol HostTimer: Sendable {
    /// Prevents the action from running if it has not started. Idempotent.
    func cancel()
}

/// Wall-clock time with timers on a Dispatch queue: no thread per timer.
public struct SystemClock: HostClock {
    private let queue: DispatchQueue

    /// - Parameter queue: where timer actions run; defaults to a shared serial utility queue.
    public init(queue: DispatchQueue = SystemClock.sharedQueue) {
        self.queue = queue
    }

    /// The serial, utility-QoS queue on which the timers of every ``SystemClock`` created without
    /// a queue run.
    public static let sharedQueue = DispatchQueue(label: "optimization.host-clock", qos: .utility)

    public func now() -> Double {
        Date().timeIntervalSince1970 * 1000
    }

    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any HostTimer {
        let item = DispatchWorkItem(block: action)
        let milliseconds = delay.inMilliseconds
        let nanoseconds = milliseconds > 0 ? Int(min(milliseconds, 1e12) * 1_000_000) : 0
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: item)
        return DispatchTimer(item: item)
    }

    private struct DispatchTimer: HostTimer, @unchecked Sendable {
        // DispatchWorkItem is thread-safe; it is not annotated Sendable on Linux.
        let item: DispatchWorkItem
        func cancel() { item.cancel() }
    }
}
