import Dispatch
import Synchronization

/// Runs async work from synchronous code (the CLI's main thread, never a cooperative-pool
/// thread) and waits for it.
public func blocking<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await operation()
            result.withLock { $0 = .success(value) }
        } catch {
            result.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// ``blocking(_:)`` for work that cannot fail.
public func blockingUntilDone(_ operation: @escaping @Sendable () async -> Void) {
    try? blocking { () async throws -> Void in await operation() }
}
