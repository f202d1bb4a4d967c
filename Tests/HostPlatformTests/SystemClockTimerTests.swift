#if os(Linux)
import Dispatch
@testable import HostPlatform
import Synchronization
import Testing

/// `SystemClock`'s timers on the process's timer thread: real time, so each test waits only for
/// timers of a few milliseconds, with a hang bound far beyond them.
@Suite(.serialized) struct SystemClockTimerTests {
    /// Collects what timer actions report, in the order they run.
    private final class Fired: Sendable {
        let names = Mutex<[String]>([])
        let stream: AsyncStream<String>
        let sink: AsyncStream<String>.Continuation

        init() {
            (stream, sink) = AsyncStream.makeStream(of: String.self)
        }

        func record(_ name: String) {
            names.withLock { $0.append(name) }
            sink.yield(name)
        }

        /// Waits until `count` actions ran (60 s hang bound).
        func wait(for count: Int) async throws {
            let stream = stream
            let arrived = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    var seen = 0
                    for await _ in stream {
                        seen += 1
                        if seen == count { return true }
                    }
                    return false
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(60))
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                sink.finish()
                return first
            }
            #expect(arrived, "timers did not fire within the hang bound")
        }
    }

    @Test func timersFireInDeadlineOrderOnTheClocksQueue() async throws {
        let queue = DispatchQueue(label: "system-clock-tests")
        let clock = SystemClock(queue: queue)
        let fired = Fired()
        _ = clock.schedule(after: .milliseconds(30)) {
            dispatchPrecondition(condition: .onQueue(queue))
            fired.record("30")
        }
        _ = clock.schedule(after: .milliseconds(10)) { fired.record("10") }
        _ = clock.schedule(after: .milliseconds(20)) { fired.record("20") }
        try await fired.wait(for: 3)
        #expect(fired.names.withLock { $0 } == ["10", "20", "30"])
    }

    @Test func aCancelledTimerNeverRunsAndTimersArmedLaterStillFire() async throws {
        let clock = SystemClock(queue: DispatchQueue(label: "system-clock-tests"))
        let fired = Fired()
        // The cancelled timer is due in 1 s, so the cancel on the next line comes first even on a
        // busy machine (a timer already handed to its queue still runs: that is the contract).
        let cancelled = clock.schedule(after: .seconds(1)) { fired.record("cancelled") }
        cancelled.cancel()
        cancelled.cancel()  // idempotent
        _ = clock.schedule(after: .milliseconds(1_100)) { fired.record("kept") }
        try await fired.wait(for: 1)
        #expect(fired.names.withLock { $0 } == ["kept"], "the earlier, cancelled timer was dropped before the later one fired")
    }

    @Test func armingLaterTimersAndCancellingThemWakesNoThread() {
        let clock = SystemClock(queue: DispatchQueue(label: "system-clock-tests"))
        let earliest = clock.schedule(after: .seconds(600)) {}
        let wakesBefore = TimerThread.shared.wakeCount
        // A request's budget: armed after the earliest pending timer, cancelled before it is due.
        for _ in 0..<1_000 {
            clock.schedule(after: .seconds(900)) {}.cancel()
        }
        // At most the one wake the earliest timer's own arming may still cause.
        #expect(TimerThread.shared.wakeCount - wakesBefore <= 1)
        #expect(TimerThread.shared.pendingCount == 1, "only the earliest timer is pending")
        earliest.cancel()
        #expect(TimerThread.shared.pendingCount == 0)
    }
}
#endif
