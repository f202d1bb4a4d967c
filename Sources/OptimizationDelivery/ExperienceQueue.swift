import HostPlatform
import Logging
import OptimizationJSON
import OrderedCollections
import Synchronization

/// A client's Experience delivery queue: the visitor's built Experience events, sent in order,
/// one upsert at a time, by the rules of ``DeliveryPolicy``. The ``ExperienceFlightHandler`` (the
/// client's engine) builds each request and reads each answer; everything else is here.
///
/// **Accepting.** ``accept(eventJSON:profileId:)`` queues an event and, while online, starts a
/// flush. Its ``Acceptance`` says whether the sender should wait for the answer (a ticket: the
/// event goes out with the flight now starting or the one in flight) or not (offline, waiting on
/// disk only, a backoff wait or an open circuit: the event stays queued for later).
///
/// **Flights.** A flight sends every queued event in ONE request, in insertion order. While it is
/// in flight, accepted events wait; when it ends with the events delivered or refused, the next
/// flight follows at once with what arrived meanwhile. ``flush()`` awaits the flight in flight and
/// then sends what is left (no clock advance needed). A flight ends only once its answer has been
/// reported: the handler told, the outbox acknowledged, queue events delivered and the other
/// waiting senders released. Until then it is still the flight in progress (``flush()`` awaits
/// it), and a flush asked for meanwhile (a timer, coming back online) follows it.
///
/// **Answers.** 2xx: the sent events leave the queue. 408/429/5xx or a transport failure: they
/// stay, the next flight waits the backoff (doubling from ``DeliveryPolicy/baseBackoff`` with
/// jitter, at least the server's `Retry-After`) and a retry is scheduled after it; after
/// ``DeliveryPolicy/maxConsecutiveFailures`` failures the circuit opens for
/// ``DeliveryPolicy/circuitOpenDuration``. While a backoff wait runs or the circuit is open **no
/// request leaves**, whatever timer fires and whether or not a flush is asked for; coming back
/// online (``setOnline(_:)``) ends a backoff wait, not an open circuit. Other 4xx: the batch is
/// dropped (`batchDropped`). 401/403/404: delivery stops for good, everything queued is discarded
/// (`deliveryDisabled`) and later events are refused.
///
/// **Capacity.** Without an outbox ``DeliveryPolicy/experienceMaxEvents`` is a cap: the oldest
/// events not in flight are dropped for room (`offlineDrop`). With a `DurableOutbox` every event
/// is stored before ``accept(eventJSON:profileId:)`` returns (a failed write fails the call and
/// queues nothing), memory holds a window of the stored backlog, and every event that leaves the
/// queue for good is acknowledged in the outbox.
///
/// **Reports.** Queue events (``QueueEvent``, queue `experience`) go to `onQueueEvent`, outside
/// the queue's lock, on the thread that caused them.
///
/// **Threading.** Every method is safe from any thread. The handler is called outside the lock;
/// ``accept(eventJSON:profileId:)`` and ``purge()`` (called from inside the handler's engine)
/// never call the handler: their flush starts in a task.
package final class ExperienceQueue: Sendable {
    /// Why events left the queue for good (the outbox acknowledges them).
    package typealias Removal = InsightsQueue.Removal

    /// What ``accept(eventJSON:profileId:)`` did with an event.
    package struct Acceptance: Sendable, Equatable {
        /// What the sender should do.
        package enum Disposition: Sendable, Equatable {
            /// Wait for the flight that carries the event; the handler settles the ticket.
            case awaitsAnswer(ticket: UInt64)
            /// Nothing to wait for: the event stays queued (offline, on disk only, a backoff wait,
            /// an open circuit, a closed queue).
            case queued
            /// Delivery is disabled (401/403/404): the event was not queued.
            case refused
        }

        /// What the sender should do.
        package var disposition: Disposition
        /// Tickets of earlier events the cap dropped: their senders stop waiting.
        package var released: [UInt64]
    }

    let policy: DeliveryPolicy
    let transport: any FetchTransport
    let clock: any HostClock
    let outbox: DurableOutbox?
    let logger: Logger
    let random: @Sendable () -> Double
    let onQueueEvent: @Sendable (QueueEvent) -> Void
    let handler = Mutex<(any ExperienceFlightHandler)?>(nil)
    /// The shared delivery mechanism over this queue's events.
    let state: Mutex<State>

    /// One queued event.
    struct Queued: Sendable {
        /// Its place in the queue; also the sender's ticket while `awaited`.
        let id: UInt64
        let messageId: String
        let eventJSON: String
        let sequence: UInt64?
        var awaited = false
    }

    /// What one flight sends.
    struct Snapshot: Sendable {
        var events: [Queued]
        var generation: Int
    }

    typealias State = DeliveryQueueCore<Events>

    /// Reports gathered under the lock, delivered after it.
    struct Pending {
        var report = DeliveryReport<Queued>()
        var released: [UInt64] = []
    }

    /// - Parameters:
    ///   - policy: the delivery numbers (``DeliveryPolicy/experienceMaxEvents`` is the capacity).
    ///   - transport: carries the requests (its timeout bounds each one).
    ///   - clock: time and timers (a `ManualClock` in tests).
    ///   - outbox: a durable outbox to store every event in before it is accepted, or nil.
    ///   - logger: counts and statuses only, never an event's content.
    ///   - random: the jitter's source, a number in [0, 1).
    ///   - onQueueEvent: the queue's reports.
    package init(
        policy: DeliveryPolicy, transport: any FetchTransport, clock: any HostClock, outbox: DurableOutbox? = nil, logger: Logger,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        onQueueEvent: @escaping @Sendable (QueueEvent) -> Void = { _ in }
    ) {
        self.policy = policy
        self.transport = transport
        self.clock = clock
        self.outbox = outbox
        self.logger = logger
        self.random = random
        self.onQueueEvent = onQueueEvent
        state = Mutex(State(
            queue: .experience, capacity: policy.experienceMaxEvents, policy: policy, clock: clock, outbox: outbox, logger: logger))
    }

    /// Sets the side that builds requests and reads answers (nil: none; flights then fail and
    /// retry). Call before the first event.
    package func attach(_ handler: (any ExperienceFlightHandler)?) {
        self.handler.withLock { $0 = handler }
    }

    // MARK: Accepting

    /// Queues one built event (with an outbox: stores it first) and, while online, starts a
    /// flush in a task.
    /// - Parameters:
    ///   - eventJSON: the event's JSON text; it must carry a non-empty `messageId`.
    ///   - profileId: the profile the event belongs to (stored beside it for erasure), if known.
    /// - Returns: what the sender should do (see ``Acceptance``).
    /// - Throws: ``DeliveryQueueError/notStored(_:)`` when the outbox could not store it or the
    ///   text is not an event (nothing is queued).
    package func accept(eventJSON: String, profileId: String?) throws(DeliveryQueueError) -> Acceptance {
        let parts: (messageId: String, consent: Bool)
        do {
            parts = try InsightsEvent.parts(ofEvent: eventJSON)
        } catch {
            throw .notStored(.invalidEvent("an Experience event must be an object with a messageId"))
        }
        let now = clock.now()
        var pending = Pending()
        var startFlush = false
        let result = state.withLock { state -> Result<Acceptance, DeliveryQueueError> in
            if state.disabled { return .success(Acceptance(disposition: .refused, released: [])) }
            let entry = Events.Entry(messageId: parts.messageId, eventJSON: eventJSON)
            var inMemory: UInt64?
            if outbox != nil {
                do throws(OutboxError) {
                    inMemory = try state.store(OutboxEvent(
                        queue: .experience, messageId: parts.messageId, profileId: profileId.flatMap { $0.isEmpty ? nil : $0 },
                        consent: parts.consent, acceptedAt: clock.now(), payload: Array(eventJSON.utf8)), entry: entry)
                } catch {
                    logger.warning("an accepted Experience event could not be stored; the call fails", metadata: ["error": "\(error)"])
                    return .failure(.notStored(error))
                }
            } else {
                makeRoom(in: &state, pending: &pending)
                inMemory = state.take(entry, sequence: nil)
            }
            guard !state.closed, state.online else { return .success(Acceptance(disposition: .queued, released: pending.released)) }
            startFlush = true
            guard let id = inMemory, state.active != nil || state.mayFlush(now: now),
                  let index = state.events.items.lastIndex(where: { $0.id == id }) else {
                return .success(Acceptance(disposition: .queued, released: pending.released))
            }
            state.events.items[index].awaited = true
            return .success(Acceptance(disposition: .awaitsAnswer(ticket: id), released: pending.released))
        }
        pending.released = []  // returned to the sender instead
        deliver(pending)
        // The caller is inside the handler's engine: the flight (which calls the handler) starts
        // in a task.
        if startFlush { Task { [self] in self.startFlush() } }
        return try result.get()
    }

    /// Whether the network is reachable; while offline nothing is sent. Coming back online ends a
    /// backoff wait (the circuit stays as it is) and flushes.
    package func setOnline(_ online: Bool) {
        let restored = state.withLock { $0.setOnline(online) }
        if restored { startFlush() }
    }

    /// Events in memory (queued and in flight; with an outbox, its window).
    package var count: Int {
        state.withLock { $0.events.count }
    }

    /// Whether 401/403/404 stopped delivery for good.
    package var isDisabled: Bool {
        state.withLock { $0.disabled }
    }

    /// Whether the circuit is open (nothing is sent until it has passed).
    package var isCircuitOpen: Bool {
        let now = clock.now()
        return state.withLock { $0.retry.isCircuitOpen(now: now) }
    }

    // MARK: Removing

    /// Removes the events with these `messageId`s (the outbox dropped them: a bound or the time
    /// to live), reports one `offlineDrop` with `reason` and releases their senders.
    /// - Returns: how many were in memory.
    @discardableResult
    package func removeMessages(_ messageIds: [String], reason: String) -> Int {
        guard !messageIds.isEmpty else { return 0 }
        var pending = Pending()
        let gone = state.withLock { $0.remove(messageIds: messageIds, reason: reason, report: &pending.report) }
        pending.released = gone.filter(\.awaited).map(\.id)
        deliver(pending)
        return gone.count
    }

    /// Discards everything in memory and forgets failures and waits (consent withdrawn: the
    /// caller purges its outbox). A request in flight finishes but changes nothing.
    /// - Returns: the tickets of the senders still waiting; they stop waiting (the caller
    ///   settles them: it is inside the engine).
    package func purge() -> [UInt64] {
        state.withLock { state -> [UInt64] in
            let waiting = state.events.items.filter(\.awaited).map(\.id)
            state.purge()
            return waiting
        }
    }

    // MARK: Lifecycle

    /// With an outbox: fills the window from the stored backlog (a restart) and flushes it.
    /// - Returns: how many stored events were loaded.
    @discardableResult
    package func resume() -> Int {
        guard outbox != nil else { return 0 }
        let loaded = state.withLock { $0.resume() }
        if loaded > 0 { startFlush() }
        return loaded
    }

    /// Stops retries for good and cancels a request in flight; later events stay queued and
    /// nothing more is reported. What is queued stays (with an outbox: on disk).
    package func close() {
        closeQueue()?.cancel()
    }

    /// A client's last, best-effort attempt (its `destroy()`): starts one more flight, also while
    /// offline (not during a backoff wait or an open circuit), then closes like ``close()`` but
    /// lets that request finish in the background. Call while the handler can still build the
    /// request.
    /// - Returns: the request in flight, if any (to await before shutting its transport down).
    @discardableResult
    package func closeAfterFinalFlush() -> Task<Void, Never>? {
        _ = beginFlush(despiteOffline: true)
        return closeQueue()
    }

    private func closeQueue() -> Task<Void, Never>? {
        let (active, waiting) = state.withLock { state -> (Task<Void, Never>?, [UInt64]) in
            _ = state.close()
            // A finishing flight has settled its own senders; the others are released here (the
            // handler is detached before the flight would release them).
            return (state.active, state.active == nil || state.finishing ? releaseWaiting(&state) : [])
        }
        if !waiting.isEmpty { handler.withLock { $0 }?.released(tickets: waiting) }
        handler.withLock { $0 = nil }
        return active
    }

    // MARK: Reports

    /// Delivers what was gathered under the lock: acknowledgements, queue events, released senders.
    func deliver(_ pending: Pending) {
        pending.report.deliver(outbox: outbox, isClosed: { state.withLock { $0.closed } }, onQueueEvent: onQueueEvent) { _, _ in }
        if !pending.released.isEmpty { handler.withLock { $0 }?.released(tickets: pending.released) }
    }

    /// Clears every sender's wait; returns their tickets.
    func releaseWaiting(_ state: inout State) -> [UInt64] {
        var tickets: [UInt64] = []
        for index in state.events.items.indices where state.events.items[index].awaited {
            tickets.append(state.events.items[index].id)
            state.events.items[index].awaited = false
        }
        return tickets
    }

    /// Without an outbox: drops the oldest events not in flight until one more fits, reporting
    /// one `offlineDrop`; their waiting senders go to `pending.released`.
    func makeRoom(in state: inout State, pending: inout Pending) {
        let dropped = state.makeRoom(report: &pending.report)
        guard !dropped.isEmpty else { return }
        pending.released += dropped.filter(\.awaited).map(\.id)
        pending.report.report(state.queueEvent(.offlineDrop, [
            "droppedCount": .number(JSONNumber(dropped.count)), "droppedEvents": .array([]),
            "maxEvents": .number(JSONNumber(state.capacity)), "queuedEvents": .number(JSONNumber(state.events.count + 1)),
        ]), listing: dropped)
    }
}
