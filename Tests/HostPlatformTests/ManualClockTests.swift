import HostPlatform
import Synchronization
import Testing

/// `ManualClock` is what every deterministic test of the library runs its timers on: these tests
/// pin its contract (order, cancellation, time moving only when told).
@Suite struct ManualClockTests {
    @Test func timersFireInDueOrderAndOnlyWhenTimeReachesThem() {
        let clock = ManualClock(start: 1_000)
        let fired = Mutex<[String]>([])
        _ = clock.schedule(after: .milliseconds(300)) { fired.withLock { $0.append("late") } }
        _ = clock.schedule(after: .milliseconds(100)) { fired.withLock { $0.append("early") } }
        _ = clock.schedule(after: .milliseconds(100)) { fired.withLock { $0.append("early, second") } }
        clock.advance(by: .milliseconds(99))
        #expect(fired.withLock { $0 }.isEmpty)
        #expect(clock.now() == 1_099)
        clock.advance(by: .milliseconds(1))
        #expect(fired.withLock { $0 } == ["early", "early, second"])
        #expect(clock.pendingTimerCount == 1)
        #expect(clock.nextDueTime == 1_300)
        clock.advance(by: .seconds(1))
        #expect(fired.withLock { $0 } == ["early", "early, second", "late"])
        #expect(clock.now() == 2_100)
    }

    @Test func aCancelledTimerNeverFires() {
        let clock = ManualClock()
        let fired = Mutex(false)
        let timer = clock.schedule(after: .seconds(1)) { fired.withLock { $0 = true } }
        timer.cancel()
        clock.advance(by: .seconds(5))
        #expect(fired.withLock { $0 } == false)
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func aTimerScheduledByAFiringTimerRunsWithinTheSameAdvanceWhenDue() {
        let clock = ManualClock(start: 0)
        let times = Mutex<[Double]>([])
        _ = clock.schedule(after: .milliseconds(10)) {
            times.withLock { $0.append(clock.now()) }
            _ = clock.schedule(after: .milliseconds(10)) { times.withLock { $0.append(clock.now()) } }
        }
        clock.advance(by: .milliseconds(25))
        #expect(times.withLock { $0 } == [10, 20])
        #expect(clock.now() == 25)
    }

    @Test func negativeDelaysAndAdvancesCountAsZero() {
        let clock = ManualClock(start: 500)
        let fired = Mutex(0)
        _ = clock.schedule(after: .milliseconds(-50)) { fired.withLock { $0 += 1 } }
        clock.advance(by: .milliseconds(-10))
        #expect(clock.now() == 500)
        #expect(fired.withLock { $0 } == 1)
    }

    @Test func durationsConvertToMilliseconds() {
        #expect(Duration.milliseconds(1_500).inMilliseconds == 1_500)
        #expect(Duration.microseconds(250).inMilliseconds == 0.25)
        #expect(Duration.seconds(2.9).wholeMilliseconds == 2_900)
        #expect(Duration.seconds(Int64.max).wholeMilliseconds == Int.max)
    }
}
