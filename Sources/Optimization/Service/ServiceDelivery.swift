import JavaScriptHost
import Logging

/// The delivery path of an ``OptimizationService``: its Insights events, split by profile over
/// one or more delivery shards (``DeliveryShard``: a dedicated engine whose shared core runs an
/// Insights queue), with the delivery rules of the single-visitor client in each (flush at 25
/// queued events, every `QueueFlushPolicy.flushInterval`, and on ``flush(force:)``; backoff with
/// jitter, circuit breaker, Retry-After, 401/403/404 disable; <doc:DeliveryGuarantees>). Every
/// event of a profile goes to the same shard (a stable hash of the profile id), so its events
/// stay in order and are batched per profile as before; events of different profiles are
/// queued in parallel. One flush is in flight per shard at a time, so HTTP concurrency stays
/// bounded by the shard count however many visitors there are.
///
/// Without an outbox there is one shard per pool engine, each holding an equal share of
/// ``OptimizationService/Options/insightsMaxEvents``. With a ``DurableOutbox`` there is one
/// shard: the queue stores every accepted event before ``enqueue(_:)`` returns, holds a window
/// of the stored backlog in memory (``OptimizationService/Options/insightsMaxEvents`` events;
/// the rest waits on disk and is loaded as the window drains), and acknowledges every event
/// that leaves it for good; at start the window is filled from what is on disk. The same
/// ``OutboxLink`` as the single-visitor client's does it (the EventOutbox article “The durable
/// outbox”).
///
/// The service's one Experience circuit lives on the first shard's engine.
///
/// **Threading.** ``enqueue(_:)`` is synchronous; ``flush(force:)`` may be called from any task.
final class ServiceDelivery: Sendable {
    let shards: [DeliveryShard]
    let link: OutboxLink?
    private let logger: Logger

    var outbox: DurableOutbox? { link?.outbox }

    /// - Parameters:
    ///   - runtimes: one engine per shard; exactly one with an `outbox`.
    ///   - removals: with a shared outbox (and no `outbox`), told of every event that left a
    ///     queue for good: its `messageId`s and the shared core's reason (inside the engine call).
    init(
        runtimes: [OptimizationRuntime], outbox: DurableOutbox? = nil,
        removals: (@Sendable (_ messageIds: [String], _ reason: String) -> Void)? = nil, logger: Logger,
        metrics: ServiceMetrics? = nil
    ) throws(OptimizationError) {
        precondition(!runtimes.isEmpty && (outbox == nil || runtimes.count == 1), "one or more delivery engines; one with an outbox")
        precondition(outbox == nil || removals == nil, "a durable outbox or a shared outbox, not both")
        self.shards = runtimes.map { DeliveryShard(runtime: $0, logger: logger, metrics: metrics) }
        self.link = outbox.map { OutboxLink(outbox: $0, logger: logger) }
        self.logger = logger
        for runtime in runtimes {
            do {
                try link?.install(on: runtime.engine)
                if let removals { try OutboxLink.installRemovalReports(on: runtime.engine, removals) }
                try runtime.engine.call(BridgeContract.Service.startDelivery)
            } catch {
                throw .bridgeError("cannot start the service delivery queue: \(error)")
            }
        }
        if let link, let runtime = runtimes.first {
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

    /// The shard of a profile: FNV-1a of its id's UTF-8, the same in every process.
    func shard(for profileId: String) -> DeliveryShard {
        if shards.count == 1 { return shards[0] }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in profileId.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return shards[Int(hash % UInt64(shards.count))]
    }

    /// Puts events into their profiles' queues; with an outbox each is stored first.
    /// - Returns: the size of the last queue they joined (for the queue-depth metric).
    /// - Throws: `OptimizationError/eventNotStored(_:)` when the outbox could not store an event
    ///   (it and the events after it are not queued; those before it are),
    ///   `OptimizationError/notInitialized` when the engine is closed,
    ///   `OptimizationError/bridgeError(_:)` if the engine refuses some of them (without an
    ///   outbox: those are reported as dropped, see ``DeliveryShard``, and the others queued).
    @discardableResult
    func enqueue(_ items: [InsightsItem]) throws(OptimizationError) -> Int {
        if let link { return try enqueueStored(items, link: link) }
        if shards.count == 1 { return try shards[0].enqueue(items.map(\.jsonText)) }
        // Every shard gets its items even when another one fails: a failure is reported once
        // every item was queued or reported.
        var size = 0
        var failure: OptimizationError?
        for (shard, positions) in grouped(items) {
            do throws(OptimizationError) {
                size = try shard.enqueue(positions.map { items[$0].jsonText })
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return size
    }

    /// `items` by shard: each shard with the positions of its items, in order, shards in the
    /// order of their first item.
    private func grouped(_ items: [InsightsItem]) -> [(DeliveryShard, [Int])] {
        if items.count == 1 { return [(shard(for: items[0].profileId), [0])] }
        var groups: [(DeliveryShard, [Int])] = []
        var index: [ObjectIdentifier: Int] = [:]
        for (position, item) in items.enumerated() {
            let shard = shard(for: item.profileId)
            if let existing = index[ObjectIdentifier(shard)] {
                groups[existing].1.append(position)
            } else {
                index[ObjectIdentifier(shard)] = groups.count
                groups.append((shard, [position]))
            }
        }
        return groups
    }

    /// What became of one claimed event handed to ``admit(_:)``.
    enum Admitted: Sendable, Equatable {
        /// In its shard's queue.
        case queued
        /// The queue refused it (not a `{profile, event}` object); the message says why.
        case refused(String)
        /// Not queued: the shard's engine is closed.
        case notQueued
    }

    /// Puts events into their profiles' queues (no durable outbox) and tells the fate of each,
    /// reporting none of them: the shared outbox's claimed events, which its relay acknowledges,
    /// gives back or sets aside.
    /// - Returns: one fate per item, in the order given.
    func admit(_ items: [InsightsItem]) -> [Admitted] {
        var fates = [Admitted](repeating: .notQueued, count: items.count)
        for (shard, positions) in grouped(items) {
            guard let admission = try? shard.admit(positions.map { items[$0].jsonText }) else { continue }
            for position in positions { fates[position] = .queued }
            for index in admission.refused { fates[positions[index]] = .refused(admission.reason ?? "refused") }
        }
        return fates
    }

    /// With the outbox: one call under the engine's lock, so a failure to store is this call's.
    private func enqueueStored(_ items: [InsightsItem], link: OutboxLink) throws(OptimizationError) -> Int {
        let engine = shards[0].runtime.engine
        let itemsText = "[" + items.map(\.jsonText).joined(separator: ",") + "]"
        let result = engine.withExclusiveAccess { () -> Result<Int, OptimizationError> in
            do {
                return .success(try engine.call(BridgeContract.Service.enqueueInsights, .json(itemsText)).numberValue.flatMap { Int(clampingJavaScriptNumber: $0) } ?? 0)
            } catch JavaScriptError.engineClosed {
                return .failure(.notInitialized)
            } catch {
                if case JavaScriptError.exception(let exception) = error, exception.message.contains(BridgeContract.Native.outboxAppend.name),
                   let failure = link.lastAppendFailure {
                    return .failure(.eventNotStored(failure))
                }
                return .failure(.bridgeError("\(error)"))
            }
        }
        return try result.get()
    }

    /// Removes one profile's queued events from memory.
    /// - Returns: how many were removed.
    func eraseProfileInMemory(_ profileId: String) -> Int {
        let shard = shard(for: profileId)
        shard.drain()
        return (try? shard.runtime.engine.call(BridgeContract.Service.eraseInsightsProfile, .string(profileId)).numberValue).flatMap { Int(clampingJavaScriptNumber: $0) } ?? 0
    }

    /// Removes one profile's queued events from the outbox on disk, then from memory.
    ///
    /// The disk goes first: removing events from memory refills the queue's window from disk,
    /// which would otherwise bring the profile's stored events back into memory.
    /// - Returns: how many were removed (with an outbox: how many it held, memory's being copies).
    func eraseProfile(_ profileId: String) throws(OptimizationError) -> Int {
        guard let outbox else { return eraseProfileInMemory(profileId) }
        let stored: Int
        do {
            stored = try outbox.eraseProfile(profileId)
        } catch {
            throw .bridgeError("the outbox could not erase the profile's events: \(error)")
        }
        _ = eraseProfileInMemory(profileId)
        return stored
    }

    /// Sends what every shard has queued (a forced flush ignores backoff and an open circuit) and
    /// returns when those requests finished; failures are reported on the queue events, not
    /// thrown.
    func flush(force: Bool) async {
        await withTaskGroup(of: Void.self) { group in
            for shard in shards {
                group.addTask {
                    shard.drain()
                    _ = try? await shard.runtime.channel.request(
                        BridgeContract.Service.flushInsights, arguments: [.bool(force)], on: shard.runtime.engine)
                }
            }
        }
    }

    // MARK: The Experience circuit

    private var circuitEngine: JavaScriptEngine { shards[0].runtime.engine }

    /// Asks the service's one Experience circuit (kept by the shared core on the first shard's
    /// engine, with the configured `QueueFlushPolicy` thresholds) whether a call may send its
    /// request. Once an open circuit's window has passed, one caller is admitted as the probe
    /// and the others fail fast until it reports through ``recordExperienceOutcome(_:)``. False
    /// when the engine is closed.
    func admitExperienceCall() -> Bool {
        (try? circuitEngine.call(BridgeContract.Service.admitExperienceCall).boolValue) ?? false
    }

    /// Reports an admitted call: `experience` is the call's Experience outcome (`{ok, kind, …}`)
    /// or nil when it ended without a request (blocked, invalid, failed before sending).
    /// - Returns: whether the circuit is open now.
    @discardableResult
    func recordExperienceOutcome(_ experience: JSONValue?) -> Bool {
        let kind = experience.map { $0["ok"]?.boolValue == true ? "ok" : $0["kind"]?.stringValue ?? "failed" } ?? "none"
        let code = experience?["code"]?.stringValue.map(JavaScriptValue.string) ?? .null
        return (try? circuitEngine.call(BridgeContract.Service.recordExperienceOutcome, .string(kind), code).boolValue) ?? false
    }

    /// Whether the Experience circuit is open now.
    var isExperienceCircuitOpen: Bool {
        (try? circuitEngine.call(BridgeContract.Service.isExperienceCircuitOpen).boolValue) ?? false
    }

    /// Events waiting in the queues (after moving what waits to enter them).
    var queuedCount: Int {
        shards.reduce(0) { total, shard in
            shard.drain()
            return total + ((try? shard.runtime.engine.call(BridgeContract.Service.insightsSize).numberValue).flatMap { Int(clampingJavaScriptNumber: $0) } ?? 0)
        }
    }

    func close() {
        for shard in shards {
            shard.drain()
            _ = try? shard.runtime.engine.call(BridgeContract.Service.closeDelivery)
            shard.runtime.close()
        }
    }

    /// Releases the outbox directory (what is still undelivered stays on disk for the next start).
    func closeOutbox() {
        link?.close()
    }
}
