import Dispatch
import Synchronization
import HostPlatform
import OptimizationEngine

/// Builds `count` engines in parallel on GCD threads with a deadline on the service's clock: the
/// bounded start-up of ``OptimizationService/start(timeout:)``.
///
/// The first failure (for example JSRuntime failing to load) or the deadline ends the wait;
/// engines finished before are closed, and engines that finish later close themselves, so a
/// failed start leaks nothing.
final class EngineStartup: Sendable {
    private struct State {
        var built: [OptimizationRuntime] = []
        var finished = false
        var continuation: CheckedContinuation<[OptimizationRuntime], any Error>?
        var deadline: (any HostTimer)?
    }

    private let count: Int
    private let make: @Sendable () throws(OptimizationError) -> OptimizationRuntime
    private let clock: any HostClock
    private let state = Mutex(State())

    init(count: Int, clock: any HostClock, make: @escaping @Sendable () throws(OptimizationError) -> OptimizationRuntime) {
        self.count = count
        self.clock = clock
        self.make = make
    }

    /// - Throws: the first engine's `OptimizationError`, or `OptimizationError/startTimedOut(_:)`.
    func run(timeout: Duration) async throws(OptimizationError) -> [OptimizationRuntime] {
        do {
            return try await withCheckedThrowingContinuation { continuation in
                state.withLock { $0.continuation = continuation }
                // A queue of its own per engine (and for the deadline): each gets a thread even
                // when the shared GCD pool is saturated, so start-up and its deadline never wait
                // for unrelated work.
                for index in 0..<count {
                    DispatchQueue(label: "optimization.engine-start.\(index)", qos: .userInitiated).async { [self] in
                        do throws(OptimizationError) {
                            let runtime = try make()
                            finishOne(.success(runtime))
                        } catch {
                            finishOne(.failure(error))
                        }
                    }
                }
                let deadline = clock.schedule(after: max(timeout, .zero)) { [self] in
                    finish(with: .failure(.startTimedOut("the engines were not ready within \(timeout)")))
                }
                let finished = state.withLock { state -> Bool in
                    state.deadline = deadline
                    return state.finished
                }
                if finished { deadline.cancel() }
            }
        } catch let error as OptimizationError {
            throw error
        } catch {
            throw .resourceLoadError("\(error)")
        }
    }

    private func finishOne(_ result: Result<OptimizationRuntime, OptimizationError>) {
        switch result {
        case .success(let runtime):
            let (complete, discard) = state.withLock { state -> ([OptimizationRuntime]?, Bool) in
                if state.finished { return (nil, true) }
                state.built.append(runtime)
                return (state.built.count == count ? state.built : nil, false)
            }
            if discard {
                runtime.close()
            } else if let complete {
                finish(with: .success(complete))
            }
        case .failure(let error):
            finish(with: .failure(error))
        }
    }

    private func finish(with result: Result<[OptimizationRuntime], OptimizationError>) {
        let (continuation, leftovers, deadline) = state.withLock {
            state -> (CheckedContinuation<[OptimizationRuntime], any Error>?, [OptimizationRuntime], (any HostTimer)?) in
            guard !state.finished else { return (nil, [], nil) }
            state.finished = true
            defer { state.continuation = nil; state.deadline = nil }
            if case .failure = result {
                defer { state.built = [] }
                return (state.continuation, state.built, state.deadline)
            }
            return (state.continuation, [], state.deadline)
        }
        deadline?.cancel()
        for runtime in leftovers { runtime.close() }
        continuation?.resume(with: result.mapError { $0 as any Error })
    }
}
