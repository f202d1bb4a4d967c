import Hummingbird
import Optimization
import ServiceLifecycle
import Synchronization

extension Application {
    /// Runs `service` as a swift-service-lifecycle service of this application, beside its HTTP
    /// server, in the application's `ServiceGroup`:
    ///
    /// - **Start.** The service's engines start (within `startTimeout`) before the server accepts
    ///   its first request, unless the service is running already. When they cannot start, the
    ///   application's run throws that `OptimizationError` and the server never listens.
    /// - **Graceful shutdown** (SIGTERM/SIGINT with `runService()`, or the enclosing group's): the
    ///   server stops accepting and finishes the requests in flight first, then the service
    ///   refuses new events, flushes what is queued (within
    ///   `OptimizationService.Options.shutdownFlushTimeout`) and shuts its engines down, so no
    ///   accepted event is lost while the APIs are reachable. Cancellation shuts it down too.
    ///
    /// Add each service once, to one application. Start it yourself first (`start(timeout:)`) when
    /// start-up failures should surface before the application is built; do not start it
    /// concurrently with the application's run.
    /// - Parameters:
    ///   - service: the service the application's routes use.
    ///   - startTimeout: the longest the engines may take to start; default 30 s.
    public mutating func addOptimizationService(_ service: OptimizationService, startTimeout: Duration = .seconds(30)) {
        let runner = OptimizationServiceRunner(service: service, startTimeout: startTimeout)
        addServices(runner)
        beforeServerStarts { try await runner.readiness.wait() }
    }
}

/// Runs an `OptimizationService` in a `ServiceGroup` and tells the server's prelude when its
/// engines are up.
struct OptimizationServiceRunner: Service, CustomStringConvertible {
    let service: OptimizationService
    let startTimeout: Duration
    let readiness = Readiness()

    var description: String { "OptimizationService" }

    func run() async throws {
        do {
            if !service.isRunning { try await service.start(timeout: startTimeout) }
            readiness.resolve(.success(()))
        } catch {
            readiness.resolve(.failure(error))
            await service.shutdown()
            throw error
        }
        // Starts nothing (running already); returns after graceful shutdown (or cancellation),
        // having refused new events, flushed and shut down.
        try await service.run()
    }

    /// A one-time signal: waiters resume once it is resolved (or when their task is cancelled).
    final class Readiness: Sendable {
        private enum State {
            case waiting([Int: CheckedContinuation<Void, any Error>], next: Int)
            case resolved(Result<Void, any Error>)
        }

        private let state = Mutex<State>(.waiting([:], next: 0))

        /// The key of one waiter, once registered.
        private final class WaiterID: Sendable {
            let value = Mutex<Int?>(nil)
        }

        func resolve(_ result: Result<Void, any Error>) {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
                guard case .waiting(let waiters, _) = state else { return [] }
                state = .resolved(result)
                return Array(waiters.values)
            }
            for waiter in waiters { waiter.resume(with: result) }
        }

        func wait() async throws {
            let id = WaiterID()
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let resolved = state.withLock { state -> Result<Void, any Error>? in
                        switch state {
                        case .resolved(let result): return result
                        case .waiting(var waiters, let next):
                            if Task.isCancelled { return .failure(CancellationError()) }
                            waiters[next] = continuation
                            state = .waiting(waiters, next: next + 1)
                            id.value.withLock { $0 = next }
                            return nil
                        }
                    }
                    if let resolved { continuation.resume(with: resolved) }
                }
            } onCancel: {
                let cancelled = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    guard case .waiting(var waiters, let next) = state, let key = id.value.withLock({ $0 }), let waiter = waiters.removeValue(forKey: key)
                    else { return nil }
                    state = .waiting(waiters, next: next)
                    return waiter
                }
                cancelled?.resume(throwing: CancellationError())
            }
        }
    }
}
