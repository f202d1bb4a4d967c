import OptimizationJSON
import OptimizationTransport
import HostPlatform
import Synchronization

extension HostClock {
    /// Suspends the calling task for `milliseconds` of this clock's time (a timer on the clock,
    /// so a `ManualClock` decides when it ends; no thread is blocked).
    /// - Throws: `CancellationError` when the task is cancelled first (the timer is cancelled).
    func sleep(milliseconds: Double) async throws {
        let state = SleepBox()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let proceed = state.value.withLock { current -> Bool in
                    guard case .waiting = current else { return false }
                    current = .suspended(continuation, nil)
                    return true
                }
                guard proceed else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                let timer = schedule(after: .milliseconds(milliseconds)) {
                    let waiting = state.value.withLock { current -> CheckedContinuation<Void, any Error>? in
                        guard case .suspended(let continuation, _) = current else { return nil }
                        current = .finished
                        return continuation
                    }
                    waiting?.resume()
                }
                let attached = state.value.withLock { current -> Bool in
                    guard case .suspended(let continuation, nil) = current else { return false }
                    current = .suspended(continuation, timer)
                    return true
                }
                if !attached { timer.cancel() }
            }
        } onCancel: {
            let cancelled = state.value.withLock { current -> (CheckedContinuation<Void, any Error>?, (any HostTimer)?) in
                defer { current = .finished }
                if case .suspended(let continuation, let timer) = current { return (continuation, timer) }
                return (nil, nil)
            }
            cancelled.1?.cancel()
            cancelled.0?.resume(throwing: CancellationError())
        }
    }
}

/// Holds the sleep's state for the closures that share it.
private final class SleepBox: Sendable {
    let value = Mutex<SleepState>(.waiting)
}

private enum SleepState {
    case waiting
    case suspended(CheckedContinuation<Void, any Error>, (any HostTimer)?)
    case finished
}
