import JavaScriptHost
import Logging

/// The one delivery path of an ``OptimizationService``: a dedicated engine whose shared core
/// runs ONE process-wide Insights queue for the events of every request, batched per profile,
/// with the delivery rules of the single-visitor client (flush at 25 queued events, every
/// `QueueFlushPolicy.flushInterval`, and on ``flush(force:)``; backoff with jitter, circuit breaker,
/// Retry-After, 401/403/404 disable; <doc:DeliveryGuarantees>). One flush is in flight at a time, so
/// HTTP concurrency stays bounded however many visitors there are.
///
/// With a ``DurableOutbox`` the queue stores every accepted event before ``enqueue(_:)`` returns,
/// holds a window of the stored backlog in memory (``OptimizationService/Options/insightsMaxEvents``
/// events; the rest waits on disk and is loaded as the window drains), and acknowledges every
/// event that leaves it for good; at start the window is filled from what is on disk. The same
/// ``OutboxLink`` as the single-visitor client's does it (the EventOutbox article “The durable outbox”).
///
/// **Threading.** ``enqueue(_:)`` is synchronous and returns once the events are stored and in
/// the queue (it takes the delivery engine's lock for one call); ``flush(force:)`` may be called
/// from any task.
final class ServiceDelivery: Sendable {
    let runtime: OptimizationRuntime
    let link: OutboxLink?
    private let logger: Logger

    var outbox: DurableOutbox? { link?.outbox }

    init(runtime: OptimizationRuntime, outbox: DurableOutbox? = nil, logger: Logger) throws(OptimizationError) {
        self.runtime = runtime
        self.link = outbox.map { OutboxLink(outbox: $0, logger: logger) }
        self.logger = logger
        do {
            try link?.install(on: runtime.engine)
            try runtime.engine.call(BridgeContract.Service.startDelivery)
        } catch {
            throw .bridgeError("cannot start the service delivery queue: \(error)")
        }
        if let link {
            do {
                let loaded = try runtime.engine.call(BridgeContract.Service.resumeInsightsBacklog).numberValue ?? 0
                if loaded > 0 {
                    logger.info("queued the Insights events recovered from the outbox", metadata: [
                        "loaded": "\(Int(loaded))", "stored": "\(link.outbox.count)",
                    ])
                }
            } catch {
                logger.error("recovered outbox events could not be queued; they stay on disk", metadata: ["error": "\(error)"])
            }
            // Events the outbox drops by itself (a bound, the time to live) leave the queue too;
            // the queue reports them as `offlineDrop` with the reason.
            link.forwardDrops { [runtime] queue, ids, reason in
                guard queue == .insights else { return }
                try runtime.engine.call(BridgeContract.Service.removeInsightsMessages, .json(ids), .string(reason))
            }
        }
    }

    /// Puts events into the queue, each with the profile it belongs to (`[{profile, event}]`);
    /// with an outbox each is stored first.
    /// - Returns: the number of events queued in memory now.
    /// - Throws: `OptimizationError/eventNotStored(_:)` when the outbox could not store an event
    ///   (it and the events after it are not queued; those before it are),
    ///   `OptimizationError/notInitialized` when the engine is closed,
    ///   `OptimizationError/bridgeError(_:)` if the engine refuses them.
    @discardableResult
    func enqueue(_ items: JSONValue) throws(OptimizationError) -> Int {
        let itemsText: String
        do {
            itemsText = try items.jsonText()
        } catch {
            throw .bridgeError("Insights events cannot be serialized: \(error)")
        }
        let engine = runtime.engine
        let link = link
        // Under the engine's lock, so the failure read is this call's.
        let result = engine.withExclusiveAccess { () -> Result<Int, OptimizationError> in
            do {
                return .success(Int(try engine.call(BridgeContract.Service.enqueueInsights, .json(itemsText)).numberValue ?? 0))
            } catch JavaScriptError.engineClosed {
                return .failure(.notInitialized)
            } catch {
                if case JavaScriptError.exception(let exception) = error, exception.message.contains(BridgeContract.Native.outboxAppend.name),
                   let failure = link?.lastAppendFailure {
                    return .failure(.eventNotStored(failure))
                }
                return .failure(.bridgeError("\(error)"))
            }
        }
        return try result.get()
    }

    /// Removes one profile's queued events from memory and from the outbox on disk.
    func eraseProfile(_ profileId: String) throws(OptimizationError) -> Int {
        let inMemory = (try? runtime.engine.call(BridgeContract.Service.eraseInsightsProfile, .string(profileId)).numberValue).map { Int($0) } ?? 0
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
        _ = try? await runtime.channel.request(BridgeContract.Service.flushInsights, arguments: [.bool(force)], on: runtime.engine)
    }

    // MARK: The Experience circuit

    /// Asks the service's one Experience circuit (kept by the shared core on this engine, with
    /// the configured `QueueFlushPolicy` thresholds) whether a call may send its request. Once
    /// an open circuit's window has passed, one caller is admitted as the probe and the others
    /// fail fast until it reports through ``recordExperienceOutcome(_:)``. False when the
    /// engine is closed.
    func admitExperienceCall() -> Bool {
        (try? runtime.engine.call(BridgeContract.Service.admitExperienceCall).boolValue) ?? false
    }

    /// Reports an admitted call: `experience` is the call's Experience outcome (`{ok, kind, …}`)
    /// or nil when it ended without a request (blocked, invalid, failed before sending).
    /// - Returns: whether the circuit is open now.
    @discardableResult
    func recordExperienceOutcome(_ experience: JSONValue?) -> Bool {
        let kind = experience.map { $0["ok"]?.boolValue == true ? "ok" : $0["kind"]?.stringValue ?? "failed" } ?? "none"
        let code = experience?["code"]?.stringValue.map(JavaScriptValue.string) ?? .null
        return (try? runtime.engine.call(BridgeContract.Service.recordExperienceOutcome, .string(kind), code).boolValue) ?? false
    }

    /// Whether the Experience circuit is open now.
    var isExperienceCircuitOpen: Bool {
        (try? runtime.engine.call(BridgeContract.Service.isExperienceCircuitOpen).boolValue) ?? false
    }

    /// Events waiting in the queue.
    var queuedCount: Int {
        (try? runtime.engine.call(BridgeContract.Service.insightsSize).numberValue).map { Int($0) } ?? 0
    }

    func close() {
        _ = try? runtime.engine.call(BridgeContract.Service.closeDelivery)
        runtime.close()
    }

    /// Releases the outbox directory (what is still undelivered stays on disk for the next start).
    func closeOutbox() {
        link?.close()
    }
}
