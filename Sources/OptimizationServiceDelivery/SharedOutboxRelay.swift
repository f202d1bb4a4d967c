import OptimizationDelivery
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
    enum Command: Sendable {
        /// Claim what fits, settle acknowledgements, renew leases when due.
        case wake
        /// Settle acknowledgements; with `claim`, then claim until nothing more fits or nothing is
        /// claimable; then resume.
        case pull(claim: Bool, CheckedContinuation<Void, Never>)
        case erase(String, CheckedContinuation<Result<Int, OptimizationError>, Never>)
        case close(CheckedContinuation<Void, Never>)
    }

    /// A claimed event in this replica's queues.
    struct Held {
        var sequence: UInt64
        var profileId: String
    }

    struct State {
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

    let configuration: SharedOutbox
    let capacity: Int
    let clock: any HostClock
    let logger: Logger
    let metrics: ServiceMetrics
    let state: Mutex<State>
    let wakePending = Atomic<Bool>(false)
    let commands: AsyncStream<Command>
    let commandSink: AsyncStream<Command>.Continuation

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
}
