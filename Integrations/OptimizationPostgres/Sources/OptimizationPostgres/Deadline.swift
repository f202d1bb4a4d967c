import Synchronization

/// Runs `operation` and returns its result, or throws ``PostgresIntegrationError/timedOut(operation:)``
/// after `timeout` (real time) without waiting for it: the operation is cancelled and left to end
/// on its own (a query waiting on a dead server ends when its connection does). This is what
/// keeps every database call of the integration bounded.
func withDeadline<T: Sendable>(
    _ timeout: Duration, operation name: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let once = ResumeOnce<T>()
    return try await withCheckedThrowingContinuation { continuation in
        once.set(continuation)
        let work = Task {
            do {
                once.resume(with: .success(try await operation()))
            } catch {
                once.resume(with: .failure(error))
            }
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled, once.resume(with: .failure(PostgresIntegrationError.timedOut(operation: name))) {
                work.cancel()
            }
        }
        once.onResume { timer.cancel() }
    }
}

/// A continuation resumed exactly once, by whichever side comes first.
private final class ResumeOnce<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var early: Result<T, any Error>?
        var resumed = false
        var cleanup: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func onResume(_ cleanup: @escaping @Sendable () -> Void) {
        let run = state.withLock { state -> Bool in
            if state.resumed { return true }
            state.cleanup = cleanup
            return false
        }
        if run { cleanup() }
    }

    /// True when this call resumed the continuation.
    @discardableResult
    func resume(with result: Result<T, any Error>) -> Bool {
        let (continuation, cleanup, won) = state.withLock { state -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?, Bool) in
            guard !state.resumed else { return (nil, nil, false) }
            state.resumed = true
            if let continuation = state.continuation {
                state.continuation = nil
                return (continuation, state.cleanup, true)
            }
            state.early = result
            return (nil, state.cleanup, true)
        }
        continuation?.resume(with: result)
        cleanup?()
        return won
    }
}
