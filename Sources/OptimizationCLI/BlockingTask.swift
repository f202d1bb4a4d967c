import Dispatch
import Synchronization

/// Runs async library calls from the synchronous command-line entry point.
enum BlockingTask {
    /// Runs `operation` on the cooperative pool and blocks the calling (main) thread until it
    /// finishes. Only for the CLI's top level: never call it from async code.
    static func run<Value: Sendable>(
        _ operation: @escaping @Sendable () async throws(CLIFailure) -> Value
    ) throws(CLIFailure) -> Value {
        let result = ResultBox<Value>()
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<Value, CLIFailure>
            do throws(CLIFailure) {
                outcome = .success(try await operation())
            } catch {
                outcome = .failure(error)
            }
            result.value.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        guard let outcome = result.value.withLock({ $0 }) else { throw .software("the operation did not finish") }
        return try outcome.get()
    }
}

/// Shares the outcome between the task and the waiting thread.
private final class ResultBox<Value: Sendable>: Sendable {
    let value = Mutex<Result<Value, CLIFailure>?>(nil)
}
