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

/// Wall-clock time with timers whose actions run on a Dispatch queue: no thread per timer.
///
/// On Linux the process's one timer thread keeps the pending timers in a deadline-ordered heap:
/// arming a timer that is not the earliest pending one, and cancelling a timer, wake no thread,
/// so a budget armed and cancelled around each request costs no context switch. Only a timer
/// that fires wakes a thread (its action is dispatched to the clock's queue).
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
        let milliseconds = delay.inMilliseconds
        let nanoseconds = milliseconds > 0 ? Int(min(milliseconds, 1e12) * 1_000_000) : 0
        #if os(Linux)
        return ThreadTimer(id: TimerThread.shared.schedule(afterNanoseconds: UInt64(nanoseconds), on: queue, action))
        #else
        let item = DispatchWorkItem(block: action)
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: item)
        return DispatchTimer(item: item)
        #endif
    }

    #if os(Linux)
    private struct ThreadTimer: HostTimer {
        let id: UInt64
        func cancel() { TimerThread.shared.cancel(id) }
    }
    #endif

    private struct DispatchTimer: HostTimer, @unchecked Sendable {
        // DispatchWorkItem is thread-safe; it is not annotated Sendable on Linux.
        let item: DispatchWorkItem
        func cancel() { item.cancel() }
    }
}
