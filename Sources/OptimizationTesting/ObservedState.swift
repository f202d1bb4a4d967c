import Synchronization

/// A test server's recorded state behind one lock, and the tasks waiting until a view of it
/// satisfies a condition.
///
/// Every change made through ``update(_:)`` checks the waiting conditions against the new view
/// under the same lock, so no change is missed between a waiter's first check and its
/// registration; waiters it satisfies are resumed after the lock is released. ``withLock(_:)``
/// reads or changes the state without waking anyone (for changes no condition looks at).
///
/// **Threading.** Every method is safe from any thread (the NIO handlers' event loops and the
/// tests' tasks). Conditions and `view` run under the lock: keep them short and never block.
final class ObservedState<State, View: Sendable>: Sendable {
    private struct Waiter {
        var condition: @Sendable (View) -> Bool
        var continuation: CheckedContinuation<View, any Error>
        var timeoutTask: Task<Void, Never>?
    }

    private struct Guarded {
        var state: State
        var waiters: [Int: Waiter] = [:]
        var nextWaiterID = 1
    }

    private typealias Ready = [(continuation: CheckedContinuation<View, any Error>, view: View, timeoutTask: Task<Void, Never>?)]

    private let guarded: Mutex<Guarded>
    private let view: @Sendable (State) -> View

    /// `view`: what conditions see of the state (taken under the lock, once per change that has
    /// waiters).
    init(_ initial: sending State, view: @escaping @Sendable (State) -> View) {
        guarded = Mutex(Guarded(state: initial))
        self.view = view
    }

    /// Runs `body` on the state under the lock; wakes no waiter.
    func withLock<Result>(_ body: (inout State) throws -> sending Result) rethrows -> sending Result {
        try guarded.withLock { try body(&$0.state) }
    }

    /// Runs `body` on the state under the lock, then resumes (outside the lock) every waiter whose
    /// condition the changed state satisfies.
    func update<Result>(_ body: (inout State) throws -> sending Result) rethrows -> sending Result {
        let (result, ready) = try guarded.withLock { guarded -> (Result, Ready) in
            let result = try body(&guarded.state)
            return (result, satisfiedWaiters(&guarded))
        }
        Self.resume(ready)
        return result
    }

    /// The current view of the state.
    var current: View { guarded.withLock { view($0.state) } }

    /// Waits until the view satisfies `condition` and returns that view. Throws
    /// `LocalAPIServerError.waitTimedOut(timeoutMessage(view))` once `timeout` has passed (a
    /// bound that only catches a hang: the wait ends as soon as a change satisfies it), and
    /// `CancellationError` when the waiting task is cancelled.
    func wait(
        timeout: Duration, condition: @escaping @Sendable (View) -> Bool, timeoutMessage: @escaping @Sendable (View) -> String
    ) async throws -> View {
        let id = guarded.withLock { guarded -> Int in
            defer { guarded.nextWaiterID += 1 }
            return guarded.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<View, any Error>) in
                let immediate = guarded.withLock { guarded -> Result<View, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    let seen = view(guarded.state)
                    if condition(seen) { return .success(seen) }
                    guarded.waiters[id] = Waiter(condition: condition, continuation: continuation, timeoutTask: nil)
                    return nil
                }
                if let immediate {
                    continuation.resume(with: immediate)
                    return
                }
                let timeoutTask = Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled, let self else { return }
                    self.fail(waiter: id, error: LocalAPIServerError.waitTimedOut(timeoutMessage(self.current)))
                }
                let attached = guarded.withLock { guarded -> Bool in
                    guard guarded.waiters[id] != nil else { return false }
                    guarded.waiters[id]?.timeoutTask = timeoutTask
                    return true
                }
                if !attached { timeoutTask.cancel() }
            }
        } onCancel: {
            self.fail(waiter: id, error: CancellationError())
        }
    }

    private func fail(waiter id: Int, error: any Error) {
        let waiter = guarded.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.timeoutTask?.cancel()
        waiter?.continuation.resume(throwing: error)
    }

    private func satisfiedWaiters(_ guarded: inout Guarded) -> Ready {
        guard !guarded.waiters.isEmpty else { return [] }
        let seen = view(guarded.state)
        var ready: Ready = []
        for (id, waiter) in guarded.waiters where waiter.condition(seen) {
            guarded.waiters.removeValue(forKey: id)
            ready.append((waiter.continuation, seen, waiter.timeoutTask))
        }
        return ready
    }

    private static func resume(_ ready: Ready) {
        for (continuation, view, timeoutTask) in ready {
            timeoutTask?.cancel()
            continuation.resume(returning: view)
        }
    }
}
