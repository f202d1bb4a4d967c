import JavaScriptHost
import Logging
import OptimizationJSON
import Synchronization

/// One delivery engine of an ``OptimizationService`` and the Insights queue its shared core
/// runs: the events of the profiles that hash to this shard (``ServiceDelivery``).
///
/// **Ingress.** Callers do not each make their own call into JavaScript. A caller's items join
/// a short list under a ticket; then the caller takes the engine's lock, and if its items are
/// still waiting it moves everything waiting (its own and those of every caller that joined
/// meanwhile) into the queue in one call. A caller whose items another thread moved finds
/// their fate recorded under its ticket and returns at once. So under load many callers'
/// events enter the queue per call into JavaScript, and every caller returns only once its own
/// items were moved, knowing what became of each of them: no caller returns before its items
/// are in the queue, and a failure is the failing caller's. Items enter the queue in the order
/// they joined the list (a profile's events stay in order).
///
/// **Refused items.** An item the engine cannot queue (not a `{profile, event}` object, not JSON,
/// or refused by the queue) is skipped alone: the items after it, of the same caller or of
/// others, are still queued. ``enqueue(_:)`` reports the refused ones (an `offlineDrop` queue
/// event with reason `refused`, the `optimization_insights_refused_events_total` metric and a
/// log line with their count) and throws; ``admit(_:)`` leaves that to its caller (the shared
/// outbox, which gives them back to its store).
///
/// **Threading.** Every method is safe from any thread and blocks for at most one call into
/// JavaScript beyond the engine's lock; the lock is never held across an `await`.
final class DeliveryShard: Sendable {
    /// What became of the items of one call.
    struct Admission: Sendable, Equatable {
        /// The queue's size after the move that took them.
        var size: Int
        /// Positions (in the caller's items) of the items the engine refused; the others are
        /// queued.
        var refused: [Int]
        /// Why the first of them was refused (the engine's message, never the item's text).
        var reason: String?
    }

    let runtime: OptimizationRuntime
    private struct Batch {
        var ticket: UInt64
        var texts: [String]
    }

    private struct Ingress {
        var waiting: [Batch] = []
        var nextTicket: UInt64 = 0
        /// What became of the batches moved, by ticket, until their callers take it.
        var settled: [UInt64: Result<Admission, OptimizationError>] = [:]
    }

    private let ingress = Mutex(Ingress())
    /// The queue's size after the last move into it (for the queue-depth metric).
    private let lastQueueSize = Atomic<Int>(0)
    private let logger: Logger
    private let metrics: ServiceMetrics?

    init(runtime: OptimizationRuntime, logger: Logger, metrics: ServiceMetrics? = nil) {
        self.runtime = runtime
        self.logger = logger
        self.metrics = metrics
    }

    /// Adds items to the queue and reports those the engine refused.
    /// - Returns: the queue's size after the move that took them.
    /// - Throws: `OptimizationError/notInitialized` when the engine is closed (none was queued);
    ///   `OptimizationError/bridgeError(_:)` when the engine refused some of them: those are
    ///   reported (see the type) and not queued, the others are queued.
    func enqueue(_ texts: [String]) throws(OptimizationError) -> Int {
        let admission = try admit(texts)
        guard !admission.refused.isEmpty else { return admission.size }
        reportRefused(admission.refused.count)
        throw .bridgeError(
            "\(admission.refused.count) of \(texts.count) Insights events were refused by the delivery queue and dropped (the others are queued): "
                + (admission.reason ?? "refused"))
    }

    /// Adds items to the queue and returns once they were moved into it, with the fate of each;
    /// refused items are not reported (the caller does).
    /// - Throws: `OptimizationError/notInitialized` when the engine is closed or its delivery
    ///   stopped: none of `texts` was queued.
    func admit(_ texts: [String]) throws(OptimizationError) -> Admission {
        guard !texts.isEmpty else { return Admission(size: lastQueueSize.load(ordering: .relaxed), refused: []) }
        let ticket = ingress.withLock { state -> UInt64 in
            defer { state.nextTicket &+= 1 }
            state.waiting.append(Batch(ticket: state.nextTicket, texts: texts))
            return state.nextTicket
        }
        let fate = runtime.engine.withExclusiveAccess { () -> Result<Admission, OptimizationError> in
            // Moved by another thread already, or by this one now (everything waiting, this
            // caller's items included: they joined before the lock was taken).
            if let fate = ingress.withLock({ $0.settled.removeValue(forKey: ticket) }) { return fate }
            moveWaitingItems()
            return ingress.withLock { $0.settled.removeValue(forKey: ticket) } ?? .failure(.bridgeError("the delivery queue lost track of a call's events"))
        }
        return try fate.get()
    }

    /// Moves every waiting item into the queue before it returns (flush, size, erasure); each
    /// caller learns the fate of its own items.
    func drain() {
        runtime.engine.withExclusiveAccess { moveWaitingItems() }
    }

    /// The number of calls whose items wait to be moved (tests).
    var waitingCalls: Int {
        ingress.withLock { $0.waiting.count }
    }

    /// Counts and reports `count` refused events: one `offlineDrop` queue event (reason
    /// `refused`), the metric, one log line.
    private func reportRefused(_ count: Int) {
        metrics?.insightsRefused(count: count)
        logger.error("Insights events were refused by the delivery queue and dropped", metadata: ["count": "\(count)"])
        runtime.channel.queueEvents.deliver(QueueEvent(
            type: .offlineDrop, queue: .insights,
            context: ["droppedCount": .number(JSONNumber(count)), "droppedEvents": [], "reason": "refused"],
            timestamp: runtime.engine.configuration.clock.now()))
    }

    /// Under the engine's lock: every waiting item into the queue in one call, and each batch's
    /// fate recorded under its ticket.
    private func moveWaitingItems() {
        let batches = ingress.withLock { state -> [Batch] in
            defer { state.waiting.removeAll(keepingCapacity: true) }
            return state.waiting
        }
        if batches.isEmpty { return }
        let texts = batches.count == 1 ? batches[0].texts : batches.flatMap(\.texts)
        let outcome = queue(texts)
        if case .success(let admission) = outcome {
            lastQueueSize.store(admission.size, ordering: .relaxed)
        } else if case .failure(let failure) = outcome {
            logger.error("Insights events could not be queued", metadata: ["count": "\(texts.count)", "error": "\(failure)"])
        }
        ingress.withLock { state in
            var start = 0
            for batch in batches {
                let end = start + batch.texts.count
                state.settled[batch.ticket] = outcome.map { admission in
                    let refused = admission.refused.filter { $0 >= start && $0 < end }.map { $0 - start }
                    return Admission(size: admission.size, refused: refused, reason: refused.isEmpty ? nil : admission.reason)
                }
                start = end
            }
        }
    }

    /// Under the engine's lock: `texts` into the queue, in one call when they parse as one array
    /// of as many items, else one call per item (a text that is not one JSON value is refused).
    private func queue(_ texts: [String]) -> Result<Admission, OptimizationError> {
        let answer: JavaScriptValue
        do {
            answer = try runtime.engine.call(
                BridgeContract.Service.enqueueInsightsEach, .json("[" + texts.joined(separator: ",") + "]"), .number(Double(texts.count)))
        } catch JavaScriptError.engineClosed {
            return .failure(.notInitialized)
        } catch {
            // A text is not one JSON value: find which, one call each. (The parser's error quotes
            // the text, which may carry visitor data: not in the reason, which may be logged.)
            guard texts.count > 1 else {
                return .success(Admission(size: lastQueueSize.load(ordering: .relaxed), refused: [0], reason: "the item is not one JSON value"))
            }
            var merged = Admission(size: 0, refused: [])
            for (index, text) in texts.enumerated() {
                switch queue([text]) {
                case .failure(let failure): return .failure(failure)
                case .success(let one):
                    merged.size = one.size
                    if !one.refused.isEmpty {
                        merged.refused.append(index)
                        merged.reason = merged.reason ?? one.reason
                    }
                }
            }
            return .success(merged)
        }
        switch answer {
        case .number(let size):
            return .success(Admission(size: Int(clampingJavaScriptNumber: size) ?? 0, refused: []))
        case .json(let text):
            guard let value = try? JSONValue(jsonText: text) else { return .failure(.bridgeError("enqueueInsightsEach answered \(text.prefix(80))")) }
            let refused = (value["refused"]?.arrayValue ?? []).compactMap { $0.doubleValue.flatMap { Int(clampingJavaScriptNumber: $0) } }
            return .success(Admission(
                size: value["size"]?.doubleValue.flatMap { Int(clampingJavaScriptNumber: $0) } ?? 0,
                refused: refused.filter { $0 >= 0 && $0 < texts.count }, reason: value["error"]?.stringValue))
        default:
            // null: the queue is stopped (the service is closing).
            return .failure(.notInitialized)
        }
    }
}
