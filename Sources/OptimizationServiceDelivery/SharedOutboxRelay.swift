import EventOutbox
import Logging
import Synchronization
import HostPlatform
import OptimizationVocabulary

/// The running side of a ``SharedOutbox`` in one replica: it stores the events of event calls
/// (``store(_:)``), claims stored events into the Insights queues as they have room, renews the
/// leases of what it holds, acknowledges what left the queues for good, and gives the rest back
/// at shutdown (the contract is ``SharedOutbox``'s). On every poll tick it reads the store's
/// erasure log and drops from the Insights queues' memory the events of profiles erased by any
/// replica (``readErasuresIfDue()``).
///
/// **Threading.** ``store(_:)`` runs in the calling task. Everything else that talks to the store
/// (claims, acknowledgements, lease renewal, erasure, shutdown) runs one step at a time in one
/// worker task, fed by commands: so a claim and an erasure never interleave. ``removed(_:reason:)``
/// runs inside delivery-engine calls (under the engine's lock) and only records and wakes.
package final class SharedOutboxRelay: Sendable {
    private enum Command: Sendable {
        /// Claim what fits, settle acknowledgements, renew leases when due.
        case wake
        /// Settle acknowledgements; with `claim`, then claim until nothing more fits or nothing is
        /// claimable; then resume.
        case pull(claim: Bool, CheckedContinuation<Void, Never>)
        case erase(String, CheckedContinuation<Result<Int, OptimizationError>, Never>)
        case close(CheckedContinuation<Void, Never>)
    }

    /// A claimed event in this replica's queues.
    private struct Held {
        var sequence: UInt64
        var profileId: String
    }

    private struct State {
        var delivery: ServiceDelivery?
        /// Claimed events in the queues, by `messageId`.
        var held: [String: Held] = [:]
        /// Sequences of events that left the queues for good, to delete from the store.
        var acknowledged: [UInt64] = []
        /// Sequences of events the queues let go without delivering them, to give back.
        var released: [UInt64] = []
        /// Sequences of claimed events the queues refused, with how many times they were.
        var refusals: [UInt64: Int] = [:]
        /// Sequences of events refused too often, to move to the store's dead letters.
        var deadLetters: [UInt64] = []
        /// Appends skip the store until this instant (clock ms) after a failure.
        var unavailableUntil: Double?
        var appendOutageLogged = false
        var workerOutageLogged = false
        /// The Insights API refused this replica's credentials (401/403/404): it claims nothing
        /// more and gives back what reaches its queues.
        var deliveryDisabled = false
        var lastRenewal: Double
        /// Where the next read of the store's erasure log starts; nil until the first read,
        /// which must succeed before this replica claims anything.
        var erasureCursor: UInt64?
        /// A poll tick passed since the last read of the erasure log.
        var erasureCheckDue = false
        var ticker: (any HostTimer)?
        var closed = false
    }

    private let configuration: SharedOutbox
    private let capacity: Int
    private let clock: any HostClock
    private let logger: Logger
    private let metrics: ServiceMetrics
    private let state: Mutex<State>
    private let wakePending = Atomic<Bool>(false)
    private let commands: AsyncStream<Command>
    private let commandSink: AsyncStream<Command>.Continuation

    /// - Parameter capacity: the Insights events the Insights queues hold together; claims stop
    ///   when they are full.
    package init(configuration: SharedOutbox, capacity: Int, clock: any HostClock, logger: Logger, metrics: ServiceMetrics) {
        self.configuration = configuration
        self.capacity = max(1, capacity)
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        state = Mutex(State(lastRenewal: clock.now()))
        (commands, commandSink) = AsyncStream.makeStream(of: Command.self)
    }

    /// Starts the worker and the poll timer over `delivery` (whose shards report removals to
    /// ``removed(_:reason:)``).
    package func start(delivery: ServiceDelivery) {
        state.withLock { $0.delivery = delivery }
        Task { [self] in await work() }
        scheduleTick()
        requestWake()
    }

    // MARK: Appending (event calls)

    /// Stores the events of one call.
    /// - Returns: true when the store committed them (a replica claims and delivers them); false
    ///   when the store is away: the caller queues them in memory (see ``SharedOutbox``).
    package func store(_ events: [OutboxEvent]) async -> Bool {
        let now = clock.now()
        let skip = state.withLock { state -> Bool in
            if let until = state.unavailableUntil, now < until { return true }
            return state.closed
        }
        if skip {
            metrics.sharedOutboxEvents(stored: false, count: events.count)
            return false
        }
        do {
            _ = try await configuration.store.append(events)
        } catch {
            let firstFailure = state.withLock { state -> Bool in
                state.unavailableUntil = clock.now() + configuration.retryAfterFailure.inMilliseconds
                defer { state.appendOutageLogged = true }
                return !state.appendOutageLogged
            }
            if firstFailure {
                logger.warning("the shared outbox cannot store events; they are queued in this replica's memory until it can",
                               metadata: ["error": "\(error)", "retryAfterMs": "\(configuration.retryAfterFailure.inMilliseconds)"])
            }
            metrics.sharedOutboxEvents(stored: false, count: events.count)
            return false
        }
        let recovered = state.withLock { state -> Bool in
            state.unavailableUntil = nil
            defer { state.appendOutageLogged = false }
            return state.appendOutageLogged
        }
        if recovered { logger.notice("the shared outbox stores events again") }
        metrics.sharedOutboxEvents(stored: true, count: events.count)
        requestWake()
        return true
    }

    // MARK: Reports from the queues

    /// Events that left a queue for good (`reason` as the shared core names it): a claimed one is
    /// acknowledged (deleted from the store), or given back when the queue only made room
    /// (`capped`) or Insights delivery is disabled (`disabled`: the API refused this replica's
    /// credentials; another replica may deliver them, and this one claims nothing more). Events
    /// the store never held (queued in memory during an outage) are ignored.
    package func removed(_ messageIds: [String], reason: String) {
        let disabled = reason == "disabled"
        let (any, firstDisabled) = state.withLock { state -> (Bool, Bool) in
            var any = false
            for id in messageIds {
                guard let held = state.held.removeValue(forKey: id) else { continue }
                if reason == "capped" || disabled { state.released.append(held.sequence) } else { state.acknowledged.append(held.sequence) }
                any = true
            }
            let first = disabled && !state.deliveryDisabled
            if disabled { state.deliveryDisabled = true }
            return (any, first)
        }
        if firstDisabled {
            logger.error("Insights delivery is disabled in this replica: it claims no more shared-outbox events and gives back the ones it held")
        }
        if any { requestWake() }
    }

    // MARK: Commands

    /// Settles pending acknowledgements and, with `claim`, claims what fits into the queues now
    /// (`OptimizationService/flush()` sends it next).
    package func pull(claim: Bool) async {
        await withCheckedContinuation { continuation in
            if case .terminated = commandSink.yield(.pull(claim: claim, continuation)) { continuation.resume() }
        }
    }

    /// Deletes every stored event of `profileId` and removes that profile's claimed events from
    /// this replica's queues, with no claim in between.
    /// - Returns: how many stored events were deleted (the store's count).
    package func eraseProfile(_ profileId: String) async throws(OptimizationError) -> Int {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Int, OptimizationError>, Never>) in
            if case .terminated = commandSink.yield(.erase(profileId, continuation)) {
                continuation.resume(returning: .failure(.shutDown))
            }
        }
        return try result.get()
    }

    /// Settles acknowledgements, gives back every claimed event still queued here, and stops the
    /// worker and the timer. Call after the final flush, before the Insights queues close.
    package func close() async {
        await withCheckedContinuation { continuation in
            if case .terminated = commandSink.yield(.close(continuation)) { continuation.resume() }
        }
    }

    /// Stops the worker and the timer without talking to the store (the service was dropped
    /// without ``close()``): the leases of what this replica held expire and another replica
    /// claims those events.
    package func abandon() {
        state.withLock { state in
            state.closed = true
            state.ticker?.cancel()
            state.ticker = nil
        }
        commandSink.finish()
    }

    // MARK: The worker

    private func requestWake() {
        guard !wakePending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        commandSink.yield(.wake)
    }

    private func scheduleTick() {
        let timer = clock.schedule(after: configuration.pollInterval) { [weak self] in
            guard let self else { return }
            self.state.withLock { $0.erasureCheckDue = true }
            self.requestWake()
            self.scheduleTick()
        }
        let keep = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.ticker = timer
            return true
        }
        if !keep { timer.cancel() }
    }

    private func work() async {
        for await command in commands {
            switch command {
            case .wake:
                wakePending.store(false, ordering: .releasing)
                await settle()
                await renewLeasesIfDue()
                if await readErasuresIfDue() {
                    while await claimRound() {}
                }
            case .pull(let claim, let continuation):
                await settle()
                if claim, await readErasuresIfDue() {
                    while await claimRound() {}
                }
                continuation.resume()
            case .erase(let profileId, let continuation):
                continuation.resume(returning: await erase(profileId))
            case .close(let continuation):
                await shutDown()
                continuation.resume()
                commandSink.finish()
                return
            }
        }
    }

    /// One claim of what fits into the queues; true when more may be claimable and fit.
    private func claimRound() async -> Bool {
        guard let delivery = state.withLock({ $0.closed || $0.deliveryDisabled ? nil : $0.delivery }) else { return false }
        let room = capacity - delivery.queuedCount
        guard room > 0 else { return false }
        let limit = min(room, max(1, configuration.claimBatchSize))
        let records: [OutboxRecord]
        do {
            records = try await configuration.store.claim(queue: .insights, limit: limit)
        } catch {
            reportWorkerFailure("claim", error)
            return false
        }
        reportWorkerSuccess()
        guard !records.isEmpty else { return false }
        state.withLock { state in
            for record in records {
                state.held[record.messageId] = Held(sequence: record.sequence, profileId: record.profileId ?? "")
            }
        }
        let fates = delivery.admit(records.map { String(decoding: $0.payload, as: UTF8.self) })
        return await settleAdmission(of: records, fates) && records.count == limit
    }

    /// Keeps the claimed events the queues took; gives back those they did not (an engine
    /// closing) and those they refused, and moves to the dead letters the ones refused
    /// ``SharedOutbox/deadLetterAfterRefusals`` times. Events already queued are never given
    /// back here (that would deliver them twice).
    /// - Returns: false when an engine did not take its events (it is closing: claiming stops);
    ///   refused events do not stop it (each is refused a bounded number of times).
    private func settleAdmission(of records: [OutboxRecord], _ fates: [ServiceDelivery.Admitted]) async -> Bool {
        let limit = max(1, configuration.deadLetterAfterRefusals)
        let (notQueued, refused, deadLettered, reason) = state.withLock { state -> (Int, Int, Int, String?) in
            var notQueued = 0, refused = 0, deadLettered = 0
            var reason: String?
            for (record, fate) in zip(records, fates) {
                switch fate {
                case .queued:
                    state.refusals.removeValue(forKey: record.sequence)
                    continue
                case .notQueued:
                    notQueued += 1
                    guard state.held.removeValue(forKey: record.messageId) != nil else { continue }
                    state.released.append(record.sequence)
                case .refused(let why):
                    refused += 1
                    reason = reason ?? why
                    guard state.held.removeValue(forKey: record.messageId) != nil else { continue }
                    let count = state.refusals[record.sequence, default: 0] + 1
                    if count >= limit {
                        state.refusals.removeValue(forKey: record.sequence)
                        state.deadLetters.append(record.sequence)
                        deadLettered += 1
                    } else {
                        state.refusals[record.sequence] = count
                        state.released.append(record.sequence)
                    }
                }
            }
            return (notQueued, refused, deadLettered, reason)
        }
        if notQueued > 0 {
            logger.error("claimed shared-outbox events could not be queued; they are given back", metadata: ["count": "\(notQueued)"])
        }
        if refused > deadLettered {
            logger.warning("the delivery queue refused claimed shared-outbox events; they are given back", metadata: [
                "count": "\(refused - deadLettered)", "reason": "\(reason ?? "refused")",
            ])
        }
        guard notQueued > 0 || refused > 0 else { return true }
        await settle()
        return notQueued == 0
    }

    /// Deletes acknowledged events and gives released ones back; what fails is kept for the next
    /// wake (the leases of acknowledged events keep being renewed meanwhile, so no other replica
    /// sends them again).
    private func settle() async {
        let (acknowledged, released, deadLetters) = state.withLock { state in
            defer {
                state.acknowledged.removeAll()
                state.released.removeAll()
                state.deadLetters.removeAll()
            }
            return (state.acknowledged, state.released, state.deadLetters)
        }
        if !deadLetters.isEmpty {
            do {
                let moved = try await configuration.store.deadLetter(deadLetters)
                reportWorkerSuccess()
                metrics.sharedOutboxDeadLettered(count: deadLetters.count)
                logger.error("shared-outbox events the delivery queue kept refusing were moved to the store's dead letters",
                             metadata: ["count": "\(deadLetters.count)", "moved": "\(moved)"])
            } catch {
                state.withLock { $0.deadLetters.append(contentsOf: deadLetters) }
                reportWorkerFailure("dead letter", error)
            }
        }
        if !acknowledged.isEmpty {
            do {
                try await configuration.store.acknowledge(acknowledged)
                reportWorkerSuccess()
            } catch {
                state.withLock { $0.acknowledged.append(contentsOf: acknowledged) }
                reportWorkerFailure("acknowledge", error)
            }
        }
        if !released.isEmpty {
            do {
                try await configuration.store.release(released)
            } catch {
                // Retried on the next wake: while this replica renews its leases (which the
                // store does for every event it holds) they would not expire.
                state.withLock { $0.released.append(contentsOf: released) }
                reportWorkerFailure("release", error)
            }
        }
    }

    private func renewLeasesIfDue() async {
        let now = clock.now()
        let due = state.withLock { state -> Bool in
            guard !state.held.isEmpty || !state.acknowledged.isEmpty,
                  now - state.lastRenewal >= configuration.leaseRenewalInterval.inMilliseconds else { return false }
            state.lastRenewal = now
            return true
        }
        guard due else { return }
        do {
            try await configuration.store.renewLeases()
        } catch {
            reportWorkerFailure("lease renewal", error)
        }
    }

    /// Erases the profile from this replica's queues first (whatever the store answers, none of
    /// its queued events leaves this replica after this), then from the store (which records it
    /// in the erasure log the other replicas read). No claim runs in between (one worker).
    private func erase(_ profileId: String) async -> Result<Int, OptimizationError> {
        let delivery = state.withLock { state -> ServiceDelivery? in
            state.held = state.held.filter { $0.value.profileId != profileId }
            return state.delivery
        }
        _ = delivery?.eraseQueuedEvents(of: profileId)
        do {
            return .success(try await configuration.store.eraseProfile(profileId))
        } catch {
            return .failure(.bridgeError("the shared outbox could not erase the profile's events: \(error)"))
        }
    }

    /// When a poll tick passed (or the cursor is not known yet), reads the profiles erased since
    /// the last read from the store's erasure log and drops them from this replica: their events
    /// leave the Insights queues' memory (all of that profile's queued events, including ones
    /// queued in memory while the store was away), and their claimed events are forgotten and
    /// given back (`release`: the erased ones are gone from the store, so it changes nothing for
    /// them; one of the profile's events stored after the erasure becomes claimable again and is
    /// delivered later). A cursor that fell behind the log's pruning falls back to the store's
    /// `SharedOutboxStore/storedSequences(among:)`: a profile with a held event no longer
    /// stored is treated as erased. What fails is retried on the next tick.
    /// - Returns: whether the cursor is known, so claims may run (a claim before the first read
    ///   could take events of a profile erased before that read started).
    private func readErasuresIfDue() async -> Bool {
        let (cursor, due) = state.withLock { ($0.erasureCursor, $0.erasureCheckDue || $0.erasureCursor == nil) }
        guard due else { return true }
        let read: SharedOutboxErasures
        do {
            read = try await configuration.store.erasures(after: cursor)
        } catch {
            reportWorkerFailure("erasure log", error)
            return cursor != nil
        }
        var erased = Set(read.profileIds)
        if !read.isComplete {
            let held = state.withLock { Array($0.held.values) }
            do {
                let stored = Set(try await configuration.store.storedSequences(among: held.map(\.sequence)))
                erased.formUnion(held.filter { !stored.contains($0.sequence) }.map(\.profileId))
            } catch {
                reportWorkerFailure("erasure check", error)
                return cursor != nil
            }
            logger.warning("this replica read the shared outbox's erasure log too late to see every erasure; it checked which of its claimed events are still stored instead",
                           metadata: ["held": "\(held.count)", "gone": "\(erased.count)"])
        }
        reportWorkerSuccess()
        let delivery = state.withLock { state -> ServiceDelivery? in
            state.erasureCursor = read.cursor
            state.erasureCheckDue = false
            guard !erased.isEmpty else { return nil }
            for (messageId, held) in state.held where erased.contains(held.profileId) {
                state.held.removeValue(forKey: messageId)
                state.released.append(held.sequence)
            }
            return state.delivery
        }
        guard let delivery else { return true }
        var removed = 0
        for profileId in erased {
            let count = delivery.eraseQueuedEvents(of: profileId)
            removed += count
            if count > 0 {
                logger.debug("dropped the queued events of a profile another replica erased", metadata: ["profileId": "\(profileId)", "count": "\(count)"])
            }
        }
        if removed > 0 {
            metrics.sharedOutboxErasedInMemory(count: removed)
            logger.info("dropped queued events of profiles erased through the shared outbox", metadata: ["events": "\(removed)", "profiles": "\(erased.count)"])
        }
        await settle()
        return true
    }

    private func shutDown() async {
        let released = state.withLock { state -> [UInt64] in
            state.closed = true
            state.ticker?.cancel()
            state.ticker = nil
            state.released.append(contentsOf: state.held.values.map(\.sequence))
            state.held.removeAll()
            return state.released
        }
        await settle()
        if !released.isEmpty {
            logger.info("claimed shared-outbox events still queued were given back", metadata: ["count": "\(released.count)"])
        }
    }

    private func reportWorkerFailure(_ operation: String, _ error: any Error) {
        let first = state.withLock { state -> Bool in
            defer { state.workerOutageLogged = true }
            return !state.workerOutageLogged
        }
        if first {
            logger.warning("the shared outbox cannot be reached; retrying on the next poll", metadata: ["operation": "\(operation)", "error": "\(error)"])
        }
    }

    private func reportWorkerSuccess() {
        let recovered = state.withLock { state -> Bool in
            defer { state.workerOutageLogged = false }
            return state.workerOutageLogged
        }
        if recovered { logger.notice("the shared outbox is reachable again") }
    }
}
