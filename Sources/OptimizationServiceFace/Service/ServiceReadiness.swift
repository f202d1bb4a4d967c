import Synchronization

/// The tasks waiting in ``OptimizationService/waitUntilRunning()`` and what they learn: true once
/// the service runs, false once it is shut down (or the waiting task is cancelled).
///
/// **Threading.** Thread-safe; continuations are resumed outside the lock.
final class ServiceReadiness: Sendable {
    private struct State {
        /// Nil while neither has happened yet; true while running; false once shut down.
        var outcome: Bool?
        var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    /// Suspends until ``settle(running:)`` tells the outcome (at once when it already did), or
    /// the task is cancelled (false).
    func wait() async -> Bool {
        let id = state.withLock { state -> Int in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let settled = state.withLock { state -> Bool? in
                    if let outcome = state.outcome { return outcome }
                    if Task.isCancelled { return false }
                    state.waiters[id] = continuation
                    return nil
                }
                if let settled { continuation.resume(returning: settled) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: false)
        }
    }

    /// Records whether the service runs and resumes every waiting task with it.
    func settle(running: Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.outcome = running
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: running) }
    }

    /// Tasks waiting now.
    var waiterCount: Int { state.withLock { $0.waiters.count } }
}
