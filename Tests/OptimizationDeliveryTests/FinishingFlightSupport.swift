import Dispatch
import Synchronization

/// An action run inside a queue's callback (the handler's `answered`, `onRemoved`) the first
/// time it is called, on the flight's own thread, while the flight is reporting its answer: a
/// test acts at an exact point of a flight without ever blocking a thread of the cooperative
/// pool on the test.
final class FirstCall: Sendable {
    private let action = Mutex<(@Sendable () -> Void)?>(nil)

    /// The action for the first call after this one.
    func set(_ action: @escaping @Sendable () -> Void) {
        self.action.withLock { $0 = action }
    }

    /// Runs the action once (the callback calls this).
    func fire() {
        action.withLock { action in
            defer { action = nil }
            return action
        }?()
    }
}

/// A `flush()` started from inside a queue's callback and run there until it has returned or
/// waits for something (an `await` on work not done yet), so "did `flush()` return while the
/// flight was still reporting?" has an exact answer, not a race.
///
/// The flush runs in a task preferring a ``SteppedExecutor``: its jobs wait in that executor
/// until ``flushUntilItWaits(_:)`` runs them on a serial dispatch queue of their own (never a
/// thread of the cooperative pool; the callback's thread waits for that queue only for as long
/// as the flush runs without waiting). After that the flush's later jobs run as they come.
final class FlushProbe: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var returnedInside: Bool?
    }
    private let executor = SteppedExecutor()
    private let state = Mutex(State())
    private let returned = Atomic<Bool>(false)

    /// Starts `flush` and runs it until it has returned or waits; call from inside the callback.
    func flushUntilItWaits(_ flush: @escaping @Sendable () async -> Void) {
        let task = Task(executorPreference: executor) { [self] in
            await flush()
            returned.store(true, ordering: .sequentiallyConsistent)
        }
        executor.runUntilIdle()
        let returnedInside = returned.load(ordering: .sequentiallyConsistent)
        executor.passThrough()
        state.withLock { state in
            state.task = task
            state.returnedInside = returnedInside
        }
    }

    /// Whether the flush had returned when the callback went on (nil: it never ran).
    var returnedInsideTheCallback: Bool? {
        state.withLock { $0.returnedInside }
    }

    /// Returns once the flush has returned.
    func flushed() async {
        await state.withLock { $0.task }?.value
    }
}

/// A task executor driven by hand (``FlushProbe``): jobs wait until ``runUntilIdle()``, after
/// ``passThrough()`` they run as they come; either way on a serial dispatch queue of its own.
final class SteppedExecutor: TaskExecutor {
    private struct State {
        var jobs: [UnownedJob] = []
        var passing = false
    }
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "stepped-task-executor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let passing = state.withLock { state -> Bool in
            if !state.passing { state.jobs.append(job) }
            return state.passing
        }
        if passing { run(job) }
    }

    /// Runs the waiting jobs, and the jobs they queue, until none is left; returns after.
    func runUntilIdle() {
        let idle = DispatchSemaphore(value: 0)
        queue.async { [self] in
            while let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) {
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
            idle.signal()
        }
        idle.wait()
    }

    /// From now on jobs run as they come (the waiting ones first).
    func passThrough() {
        let waiting = state.withLock { state -> [UnownedJob] in
            state.passing = true
            defer { state.jobs.removeAll() }
            return state.jobs
        }
        for job in waiting { run(job) }
    }

    private func run(_ job: UnownedJob) {
        queue.async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
