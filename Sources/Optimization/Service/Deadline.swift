import JavaScriptHost
import Synchronization

/// Runs `operation` in a task of its own and waits for it at most `timeout` of `clock`'s time
/// (a timer on the clock, so a `ManualClock` decides when the deadline passes).
///
/// At the deadline the caller stops waiting; the operation is not cancelled and goes on in its
/// task (the caller then usually closes what it was waiting on, which ends it). Unlike a task
/// group, this never waits for an operation that ignores cancellation.
/// - Returns: true when the operation finished first; false when the deadline passed or the
///   calling task was cancelled first.
func withDeadline(
    _ timeout: Duration, on clock: any HostClock, _ operation: @escaping @Sendable () async -> Void
) async -> Bool {
    let race = DeadlineRace()
    return await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            race.wait(with: continuation)
            Task {
                await operation()
                race.finish(true)
            }
            race.attach(clock.schedule(after: timeout) { race.finish(false) })
        }
    } onCancel: {
        race.finish(false)
    }
}

/// The first of the operation, the timer and cancellation to finish decides the outcome.
private final class DeadlineRace: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Bool, Never>?
        var timer: (any HostTimer)?
        /// The outcome, once decided (possibly before the continuation exists: cancellation).
        var outcome: Bool?
    }

    private let state = Mutex(State())

    func wait(with continuation: CheckedContinuation<Bool, Never>) {
        let decided = state.withLock { state -> Bool? in
            if state.outcome == nil { state.continuation = continuation }
            return state.outcome
        }
        if let decided { continuation.resume(returning: decided) }
    }

    func attach(_ timer: any HostTimer) {
        let keep = state.withLock { state -> Bool in
            guard state.outcome == nil else { return false }
            state.timer = timer
            return true
        }
        if !keep { timer.cancel() }
    }

    func finish(_ outcome: Bool) {
        let (continuation, timer) = state.withLock { state -> (CheckedContinuation<Bool, Never>?, (any HostTimer)?) in
            guard state.outcome == nil else { return (nil, nil) }
            state.outcome = outcome
            defer { state.continuation = nil; state.timer = nil }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(returning: outcome)
    }
}
