import JavaScriptHost
import Logging

/// The one delivery path of an ``OptimizationService``: a dedicated engine whose shared core
/// runs ONE process-wide Insights queue for the events of every request, batched per profile,
/// with the delivery rules of the single-visitor client (flush at 25 queued events, every
/// `flushIntervalMs`, and on ``flush(force:)``; backoff with jitter, circuit breaker,
/// Retry-After, 401/403/404 disable; docs/delivery.md). One flush is in flight at a time, so
/// HTTP concurrency stays bounded however many visitors there are.
///
/// With a ``DurableOutbox`` every accepted event is appended to disk before ``enqueue(_:)``
/// returns, acknowledged when its batch is answered for good, and the events found on disk at
/// start are queued again first, with their original bytes (docs/outbox.md).
///
/// **Threading.** ``enqueue(_:)`` is synchronous and returns once the events are in the queue
/// (it takes the delivery engine's lock for one call); ``flush(force:)`` may be called from any
/// task.
final class ServiceDelivery: Sendable {
    let runtime: OptimizationRuntime
    let outbox: DurableOutbox?
    private let logger: Logger

    init(runtime: OptimizationRuntime, outbox: DurableOutbox? = nil, logger: Logger) throws(OptimizationError) {
        self.runtime = runtime
        self.outbox = outbox
        self.logger = logger
        do {
            try runtime.engine.call("__service.startDelivery")
        } catch {
            throw .bridgeError("cannot start the service delivery queue: \(error)")
        }
        if let outbox {
            let recovered = outbox.recovery.records(for: .insights)
            if !recovered.isEmpty {
                let items = "[" + recovered.map { String(decoding: $0.payload, as: UTF8.self) }.joined(separator: ",") + "]"
                do {
                    try runtime.engine.call("__service.enqueueInsights", .json(items))
                    logger.info("queued the Insights events recovered from the outbox", metadata: ["count": "\(recovered.count)"])
                } catch {
                    logger.error("recovered outbox events could not be queued; they stay on disk", metadata: ["error": "\(error)"])
                }
            }
            // Events the outbox drops by itself (a bound, the time to live) leave the queue too;
            // the queue reports them as `offlineDrop` with the reason.
            outbox.forwardDrops(logger: logger) { [runtime] queue, ids, reason in
                guard queue == .insights else { return }
                try runtime.engine.call("__service.removeInsightsMessages", .json(ids), .string(reason))
            }
        }
    }

    /// Puts events into the queue, each with the profile it belongs to (`[{profile, event}]`),
    /// after appending them to the outbox (when there is one).
    /// - Returns: the number of events queued now.
    /// - Throws: ``OptimizationError/bridgeError(_:)`` if the engine refuses them (closed).
    @discardableResult
    func enqueue(_ items: JSONValue) throws(OptimizationError) -> Int {
        let itemsText: String
        do {
            itemsText = try items.jsonText()
        } catch {
            throw .bridgeError("Insights events cannot be serialized: \(error)")
        }
        if let outbox { append(items, to: outbox) }
        do {
            return Int(try runtime.engine.call("__service.enqueueInsights", .json(itemsText)).numberValue ?? 0)
        } catch JavaScriptError.engineClosed {
            throw .notInitialized
        } catch {
            throw .bridgeError("\(error)")
        }
    }

    /// Appends every `{profile, event}` item as one outbox record (all-or-nothing). A failing
    /// disk is logged and the events stay in memory only: the call still succeeds.
    private func append(_ items: JSONValue, to outbox: DurableOutbox) {
        let events = (items.arrayValue ?? []).compactMap { item -> OutboxEvent? in
            guard let event = item["event"], let messageId = event["messageId"]?.stringValue,
                  let payload = try? item.jsonText() else { return nil }
            return OutboxEvent(
                queue: .insights, messageId: messageId, profileId: item["profile"]?["id"]?.stringValue,
                consent: event["context"]?["gdpr"]?["isConsentGiven"]?.boolValue ?? false, payload: Array(payload.utf8))
        }
        do {
            try outbox.append(contentsOf: events)
        } catch {
            logger.warning("outbox append failed; the events are kept in memory only", metadata: ["error": "\(error)"])
        }
    }

    /// Removes one profile's queued events from memory and from the outbox on disk.
    func eraseProfile(_ profileId: String) throws(OptimizationError) -> Int {
        let inMemory = (try? runtime.engine.call("__service.eraseInsightsProfile", .string(profileId)).numberValue).map { Int($0) } ?? 0
        guard let outbox else { return inMemory }
        do {
            return try outbox.eraseProfile(profileId)
        } catch {
            throw .bridgeError("the outbox could not erase the profile's events: \(error)")
        }
    }

    /// Sends what is queued (a forced flush ignores backoff and an open circuit) and returns when
    /// that request finished; failures are reported on the queue events, not thrown.
    func flush(force: Bool) async {
        _ = try? await runtime.channel.request("__service.flushInsights", arguments: [.bool(force)], on: runtime.engine)
    }

    /// Events waiting in the queue.
    var queuedCount: Int {
        (try? runtime.engine.call("__service.insightsSize").numberValue).map { Int($0) } ?? 0
    }

    func close() {
        _ = try? runtime.engine.call("__service.closeDelivery")
        runtime.close()
    }

    /// Releases the outbox directory (what is still undelivered stays on disk for the next start).
    func closeOutbox() {
        outbox?.close()
    }
}
