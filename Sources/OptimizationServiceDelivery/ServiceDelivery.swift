import Logging
import OptimizationDelivery
import OptimizationJSON
import HostPlatform
import OptimizationVocabulary

/// The delivery path of an `OptimizationService`: its Insights events in Swift
/// `InsightsQueue`s split by profile (a stable hash of the profile id, so a profile's events
/// stay in order and are batched together, and callers on different threads rarely share a
/// lock), its one Experience circuit (`DeliveryCircuit`) and the HTTP of a request's
/// Experience calls (`ExperienceSender`: the budget, 429 `ERR_PROFILE_OVERLOAD` retries with
/// the policy's backoff). No engine is on this path: the
/// request's engine builds an event (or an Experience request) once, and Swift queues, batches
/// and sends it (“Delivery guarantees” in Optimization’s documentation).
///
/// Without an outbox there is one queue per pool engine (`OptimizationService/Options/deliveryShards`),
/// each holding an equal share of `OptimizationService/Options/insightsMaxEvents`; one request
/// is in flight per queue, so HTTP concurrency stays bounded by the queue count however many
/// visitors there are. With a `DurableOutbox` there is one queue: it stores every accepted
/// event before ``enqueue(_:)`` returns, holds a window of the stored backlog in memory, and
/// acknowledges every event that leaves it for good; at start the window is filled from disk.
///
/// **Threading.** Every method is safe from any thread; ``enqueue(_:)`` takes one short lock.
package final class ServiceDelivery: Sendable {
    package let queues: [InsightsQueue]
    package let experienceCircuit: DeliveryCircuit
    package let outbox: DurableOutbox?
    private let logger: Logger
    private let metrics: ServiceMetrics?
    /// The HTTP of the Experience calls, on the engines' transport (the same tracing and metrics).
    private let experienceSender: ExperienceSender

    /// - Parameters:
    ///   - queueCount: Insights queues (1 with an `outbox`).
    ///   - url: the Insights events URL.
    ///   - policy: the delivery numbers; `insightsMaxEvents` is shared by the queues.
    ///   - outbox: this replica's durable outbox, or nil.
    ///   - removals: with a shared outbox, told of every event that left a queue for good.
    ///   - onQueueEvent: the queues' reports (`OptimizationService/queueEvents`, metrics).
    package init(
        queueCount: Int, url: String, policy: DeliveryPolicy, transport: any FetchTransport, clock: any HostClock,
        outbox: DurableOutbox? = nil, removals: (@Sendable (_ messageIds: [String], _ reason: String) -> Void)? = nil,
        onQueueEvent: @escaping @Sendable (QueueEvent) -> Void, logger: Logger, metrics: ServiceMetrics? = nil,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        precondition(queueCount >= 1 && (outbox == nil || queueCount == 1), "one or more queues; one with an outbox")
        precondition(outbox == nil || removals == nil, "a durable outbox or a shared outbox, not both")
        var share = policy
        share.insightsMaxEvents = (policy.insightsMaxEvents + queueCount - 1) / queueCount
        let onRemoved = removals.map { removals in { @Sendable (ids: [String], reason: InsightsQueue.Removal) in removals(ids, reason.rawValue) } }
        queues = (0..<queueCount).map { _ in
            InsightsQueue(
                url: url, policy: share, transport: transport, clock: clock, outbox: outbox, logger: logger,
                onQueueEvent: onQueueEvent, onRemoved: onRemoved)
        }
        experienceCircuit = DeliveryCircuit(policy: policy, clock: clock)
        experienceSender = ExperienceSender(transport: transport, clock: clock, policy: policy, logger: logger, random: random)
        self.outbox = outbox
        self.logger = logger
        self.metrics = metrics
        if let outbox, let queue = queues.first {
            let loaded = queue.resume()
            if loaded > 0 {
                logger.info("queued the Insights events recovered from the outbox", metadata: ["loaded": "\(loaded)", "stored": "\(outbox.count)"])
            }
            // Events the outbox drops by itself (a bound, the time to live) leave the queue too,
            // reported as `offlineDrop` with the reason.
            outbox.forwardDrops(logger: logger) { [queue] kind, idsText, reason in
                guard kind == .insights, let ids = try? JSONValue(jsonText: idsText).arrayValue else { return }
                queue.removeMessages(ids.compactMap(\.stringValue), reason: reason)
            }
        }
    }

    /// The queue of a profile: FNV-1a of its id's UTF-8, the same in every process.
    package func queue(for profileId: String) -> InsightsQueue {
        if queues.count == 1 { return queues[0] }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in profileId.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return queues[Int(hash % UInt64(queues.count))]
    }

    /// Puts events into their profiles' queues; with an outbox each is stored first.
    /// - Returns: the size of the last queue they joined (for the queue-depth metric).
    /// - Throws: `OptimizationError/eventNotStored(_:)` when the outbox could not store an event
    ///   (it and the events after it are not queued; those before it are),
    ///   `OptimizationError/notInitialized` when the queues are closed.
    @discardableResult
    package func enqueue(_ events: [InsightsEvent]) throws(OptimizationError) -> Int {
        var size = 0
        var failure: OptimizationError?
        // Every queue gets its events even when another one fails.
        for (queue, group) in grouped(events) {
            do throws(DeliveryQueueError) {
                size = try queue.enqueue(group).size
            } catch {
                switch error {
                case .closed: failure = failure ?? .notInitialized
                case .notStored(let stored): failure = failure ?? .eventNotStored(stored)
                }
            }
        }
        if let failure { throw failure }
        return size
    }

    /// `events` by queue, in order; queues in the order of their first event.
    private func grouped(_ events: [InsightsEvent]) -> [(InsightsQueue, [InsightsEvent])] {
        if queues.count == 1 || events.count == 1 { return [(queue(for: events.first?.profileId ?? ""), events)] }
        var groups: [(InsightsQueue, [InsightsEvent])] = []
        for event in events {
            let queue = queue(for: event.profileId)
            if let index = groups.firstIndex(where: { $0.0 === queue }) {
                groups[index].1.append(event)
            } else {
                groups.append((queue, [event]))
            }
        }
        return groups
    }

    /// What became of one claimed event handed to ``admit(_:)``.
    package enum Admitted: Sendable, Equatable {
        /// In its profile's queue.
        case queued
        /// Not an Insights item (`{profile, event}` with a `messageId`); the message says why.
        case refused(String)
        /// Not queued: the queues are closed.
        case notQueued
    }

    /// Puts claimed shared-outbox events into their profiles' queues (no durable outbox) and
    /// tells the fate of each, reporting none of them: the relay acknowledges, gives back or sets
    /// aside.
    /// - Returns: one fate per item, in the order given.
    package func admit(_ texts: [String]) -> [Admitted] {
        var fates = [Admitted](repeating: .notQueued, count: texts.count)
        var events: [InsightsEvent] = []
        var positions: [Int] = []
        for (position, text) in texts.enumerated() {
            do throws(InsightsEventError) {
                events.append(try InsightsEvent(itemJSON: text))
                positions.append(position)
            } catch {
                fates[position] = .refused(error.description)
            }
        }
        for (queue, group) in grouped(events) where !group.isEmpty {
            guard (try? queue.enqueue(group)) != nil else { continue }
            let ids = Set(group.map(\.messageId))
            for (index, event) in zip(positions, events) where ids.contains(event.messageId) { fates[index] = .queued }
        }
        return fates
    }

    /// Removes one profile's events from this process's queues (with a local outbox, from disk
    /// first), for callers that cannot fail: the shared outbox relay, which erases the shared store
    /// itself. An erasure that fails is logged at error level and counts as none.
    /// - Returns: how many were removed.
    package func eraseQueuedEvents(of profileId: String) -> Int {
        do {
            return try eraseProfile(profileId)
        } catch {
            logger.error("a profile's queued events could not be erased", metadata: ["error": "\(error)"])
            return 0
        }
    }

    /// Removes one profile's queued events from the outbox on disk (first), then from memory.
    /// - Returns: how many were removed (with an outbox: how many it held, memory's being copies).
    package func eraseProfile(_ profileId: String) throws(OptimizationError) -> Int {
        do {
            return try queue(for: profileId).eraseProfile(profileId)
        } catch {
            throw .bridgeError("the outbox could not erase the profile's events: \(error)")
        }
    }

    /// Sends what every queue holds and returns when those requests finished (or could not be
    /// made: a backoff wait or an open circuit sends nothing). Failures are reported as queue
    /// events, not thrown.
    package func flush() async {
        await withTaskGroup(of: Void.self) { group in
            for queue in queues {
                group.addTask { await queue.flush() }
            }
        }
    }

    // MARK: The Experience circuit

    /// Asks the service's one Experience circuit whether a call may send its request. Once an
    /// open circuit's window has passed, one caller is admitted as the probe and the others fail
    /// fast until it reports through ``recordExperienceOutcome(_:)``.
    package func admitExperienceCall() -> Bool {
        experienceCircuit.admit()
    }

    /// Reports an admitted call: `outcome` is the call's Experience outcome, or nil when it ended
    /// without a request (blocked, invalid, failed before sending). An answer closes the circuit;
    /// a transient API failure (``ExperienceCallOutcome/isTransientAPIFailure``) counts against it.
    /// - Returns: whether the circuit is open now.
    @discardableResult
    package func recordExperienceOutcome(_ outcome: ExperienceCallOutcome?) -> Bool {
        guard let outcome else { return experienceCircuit.record(.neutral) }
        if outcome.kind == .answered { return experienceCircuit.record(.answered) }
        return experienceCircuit.record(outcome.isTransientAPIFailure ? .transientFailure(retryAfterMilliseconds: nil) : .neutral)
    }

    // MARK: The Experience requests

    /// Sends one Experience request the shared core built (`ExperienceSender/send(_:budgetMilliseconds:)`:
    /// the budget on the clock, overload retries with the policy's backoff).
    package func sendExperience(_ request: FetchRequest, budgetMilliseconds: Double) async -> ExperienceSender.Result {
        await experienceSender.send(request, budgetMilliseconds: budgetMilliseconds)
    }

    /// Whether the Experience circuit is open now.
    package var isExperienceCircuitOpen: Bool {
        experienceCircuit.isOpen
    }

    /// Events the queues hold in memory.
    package var queuedCount: Int {
        queues.reduce(0) { $0 + $1.count }
    }

    /// Stops the queues' timers and retries and cancels requests in flight (Insights and
    /// Experience: an Experience call still sending ends `ExperienceSender.Result.closed`).
    package func close() {
        for queue in queues { queue.close() }
        experienceSender.close()
    }

    /// Releases the outbox directory (what is still undelivered stays on disk for the next start).
    package func closeOutbox() {
        outbox?.close()
    }
}
