import JavaScriptHost
import Logging
import Synchronization

/// One delivery engine of an ``OptimizationService`` and the Insights queue its shared core
/// runs: the events of the profiles that hash to this shard (``ServiceDelivery``).
///
/// **Ingress.** ``enqueue(_:)`` does not wait behind another thread's delivery work. The items
/// join a short list; if no thread is moving the list into the queue, the caller becomes that
/// thread: it moves everything waiting in one call into JavaScript, and again until the list is
/// empty. Every other caller only appends and returns. So under load many events enter the
/// queue per call into JavaScript, and the list is never left with items and no one to move
/// them. Items enter the queue in the order they joined the list (a profile's events stay in
/// order).
///
/// **Threading.** Every method is safe from any thread; the engine's lock is held for one call
/// into JavaScript at a time, never across an `await`.
final class DeliveryShard: Sendable {
    let runtime: OptimizationRuntime
    private struct Ingress {
        var waiting: [String] = []
        /// A thread is moving the waiting items into the queue.
        var moving = false
    }

    private let ingress = Mutex(Ingress())
    /// The queue's size after the last move into it (for the queue-depth metric).
    private let lastQueueSize = Atomic<Int>(0)
    private let logger: Logger

    init(runtime: OptimizationRuntime, logger: Logger) {
        self.runtime = runtime
        self.logger = logger
    }

    /// Adds items to the queue: now, or within the moves of the thread already moving items.
    /// - Returns: the queue's size after the last move into it.
    /// - Throws: `OptimizationError/notInitialized` when the engine is closed;
    ///   `OptimizationError/bridgeError(_:)` when the engine refused the items (their count is
    ///   logged; this caller's items may have been moved by another thread, whose failure is
    ///   logged the same way).
    func enqueue(_ texts: [String]) throws(OptimizationError) -> Int {
        let mover = ingress.withLock { state -> Bool in
            state.waiting.append(contentsOf: texts)
            if state.moving { return false }
            state.moving = true
            return true
        }
        if mover {
            while true {
                let moved = runtime.engine.withExclusiveAccess { moveWaitingItems() }
                let done = ingress.withLock { state -> Bool in
                    // On failure the flag is cleared too: the next caller takes over.
                    if state.waiting.isEmpty || moved != nil { state.moving = false; return true }
                    return false
                }
                if let moved { throw moved }
                if done { break }
            }
        }
        return lastQueueSize.load(ordering: .relaxed)
    }

    /// Moves every waiting item into the queue before it returns (flush, size, erasure).
    func drain() throws(OptimizationError) {
        if let failure = runtime.engine.withExclusiveAccess({ moveWaitingItems() }) { throw failure }
    }

    /// Under the engine's lock: the waiting items into the queue, one call per batch.
    /// - Returns: nil when everything waiting was moved, else the failure.
    private func moveWaitingItems() -> OptimizationError? {
        while true {
            let texts = ingress.withLock { state -> [String] in
                defer { state.waiting.removeAll(keepingCapacity: true) }
                return state.waiting
            }
            if texts.isEmpty { return nil }
            do {
                let size = try runtime.engine.call(BridgeContract.Service.enqueueInsights, .json("[" + texts.joined(separator: ",") + "]"))
                lastQueueSize.store(size.numberValue.flatMap { Int(clampingJavaScriptNumber: $0) } ?? 0, ordering: .relaxed)
            } catch JavaScriptError.engineClosed {
                return .notInitialized
            } catch {
                logger.error("Insights events could not be queued", metadata: ["count": "\(texts.count)", "error": "\(error)"])
                return .bridgeError("\(error)")
            }
        }
    }
}
