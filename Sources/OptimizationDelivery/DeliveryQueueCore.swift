import HostPlatform
import Logging
import OptimizationJSON
import OrderedCollections

/// The delivery mechanism both queues share, one value per queue under the queue's lock: event
/// ids, capacity, the durable outbox's window, the flight in progress, retries with backoff and
/// the circuit (``RetrySchedule``), and disabling. ``ExperienceQueue`` (one upsert of every
/// queued event, tickets for waiting senders) and ``InsightsQueue`` (per-profile batches) are two
/// policies over it: each keeps its events in its own ``DeliveryEvents`` and builds, sends and
/// reads its own requests.
///
/// **Capacity.** Without an outbox `capacity` is a cap: ``makeRoom(report:)`` drops the oldest
/// events not in flight (reason `capped`). With a `DurableOutbox` every event is stored before it
/// is accepted (``store(_:entry:)``), memory holds a window of `capacity` stored events
/// (`residentThrough` is the highest sequence ever taken in; `spilled` says stored events after it
/// wait on disk only), the window refills in order as it drains (``refill(accepting:)``), and
/// every event that leaves for good is acknowledged (``DeliveryReport``).
///
/// **Flights.** One at a time: ``gate(now:despiteOffline:hasEvents:)`` says whether one is in
/// progress or may start, ``launch(_:carrying:)`` records it, ``answered(generation:)`` marks it
/// finishing (it stays the flight in progress until its answer has been reported) and ``end()``
/// ends it. ``purge()`` bumps `generation`: an earlier flight's answer changes nothing.
///
/// **Threading.** A value under its queue's lock; it never blocks beyond the outbox's own calls
/// and never calls the queue's callbacks (reports are gathered into a ``DeliveryReport``).
struct DeliveryQueueCore<Events: DeliveryEvents>: Sendable {
    typealias Item = Events.Item
    typealias Removal = InsightsQueue.Removal

    /// Which queue: its queue events and outbox records.
    let queue: EventQueueKind
    /// Events in memory: the cap without an outbox, the window with one.
    let capacity: Int
    let policy: DeliveryPolicy
    let clock: any HostClock
    let outbox: DurableOutbox?
    let logger: Logger

    /// The events in memory, in the queue's order.
    var events = Events()
    var nextId: UInt64 = 0
    /// Ids of the events in the request in flight: never dropped for room.
    var inFlight: Set<UInt64> = []
    /// The flight in progress, from its start until its answer has been reported.
    var active: Task<Void, Never>?
    /// The flight in `active` has its answer and is reporting it (outside the lock).
    var finishing = false
    /// A flush was asked for while the flight was finishing: it follows the flight.
    var flushRequested = false
    /// Failures, the circuit, the wait and the retry timer.
    var retry = RetrySchedule()
    /// Events that left the queue through an answered flight (delivered or refused), ever.
    var sent: UInt64 = 0
    var online = true
    /// 401/403/404 stopped delivery for good.
    var disabled = false
    var closed = false
    /// Bumped by ``purge()``: a flight of an earlier generation changes nothing on return.
    var generation = 0
    /// With an outbox: the highest sequence ever taken into memory, and whether stored events
    /// after it wait on disk only (until a load finds the backlog's end).
    var residentThrough: UInt64 = 0
    var spilled = true

    init(queue: EventQueueKind, capacity: Int, policy: DeliveryPolicy, clock: any HostClock, outbox: DurableOutbox?, logger: Logger) {
        self.queue = queue
        self.capacity = capacity
        self.policy = policy
        self.clock = clock
        self.outbox = outbox
        self.logger = logger
    }

    /// The API's name in logs.
    var api: String { queue == .experience ? "Experience" : "Insights" }

    func queueEvent(_ type: QueueEventType, _ context: OrderedDictionary<String, JSONValue>) -> QueueEvent {
        QueueEvent(type: type, queue: queue, context: .object(context), timestamp: clock.now())
    }

    // MARK: Taking events in

    /// Puts one event at the end of the queue. - Returns: its id.
    @discardableResult
    mutating func take(_ entry: Events.Entry, sequence: UInt64?) -> UInt64 {
        nextId &+= 1
        events.append(entry, id: nextId, sequence: sequence)
        return nextId
    }

    /// Without an outbox: drops the oldest events not in flight until one more fits (removal
    /// `capped`, a warning with counts only). - Returns: the dropped events.
    @discardableResult
    mutating func makeRoom(report: inout DeliveryReport<Item>) -> [Item] {
        guard events.count >= capacity else { return [] }
        var dropped: [Item] = []
        while events.count >= capacity, let oldest = events.removeOldest(sparing: inFlight) {
            dropped.append(oldest)
        }
        guard !dropped.isEmpty else { return [] }
        logger.warning("the \(api) queue is full: dropped the oldest events", metadata: [
            "maxEvents": "\(capacity)", "dropped": "\(dropped.count)",
        ])
        report.removals.append((dropped, .capped))
        return dropped
    }

    /// With an outbox: stores the event, then keeps it in memory when the window has room and no
    /// older event waits on disk only; else it waits on disk and the window loads in order.
    /// - Returns: its id when it is in memory.
    /// - Throws: the outbox's error (nothing is queued).
    mutating func store(_ record: OutboxEvent, entry: Events.Entry) throws(OutboxError) -> UInt64? {
        guard let outbox else { return take(entry, sequence: nil) }
        let stored = try outbox.append(record)
        // A messageId stored before (a retried call) is not queued twice.
        guard stored.sequence > residentThrough else { return nil }
        if !spilled && events.count < capacity {
            residentThrough = stored.sequence
            return take(entry, sequence: stored.sequence)
        }
        spilled = true
        return refill(accepting: (stored.sequence, entry))
    }

    /// With an outbox: loads stored events, in order, while the window has room and events wait on
    /// disk only. `accepting` is the event being accepted (taken as it is, not read back); a
    /// stored record that cannot be read is acknowledged (it can never be sent) and logged.
    /// - Returns: the id of `accepting` when it was loaded.
    @discardableResult
    mutating func refill(accepting: (sequence: UInt64, entry: Events.Entry)? = nil) -> UInt64? {
        guard let outbox else { return nil }
        var acceptedId: UInt64?
        while spilled && !closed && events.count < capacity {
            let room = capacity - events.count
            let records = outbox.pendingRecords(queue: queue, after: residentThrough, limit: room)
            var unreadable: [UInt64] = []
            for record in records {
                residentThrough = max(residentThrough, record.sequence)
                if let accepting, accepting.sequence == record.sequence {
                    acceptedId = take(accepting.entry, sequence: record.sequence)
                } else if let entry = Events.entry(stored: record) {
                    take(entry, sequence: record.sequence)
                } else {
                    unreadable.append(record.sequence)
                }
            }
            events.loaded()
            if !unreadable.isEmpty {
                outbox.acknowledge(sequences: unreadable)
                logger.error("stored \(api) events that cannot be read were removed from the outbox", metadata: ["count": "\(unreadable.count)"])
            }
            if records.count < room { spilled = false }
        }
        return acceptedId
    }

    /// With an outbox, fills the window from the stored backlog (a restart).
    /// - Returns: how many stored events were loaded.
    mutating func resume() -> Int {
        spilled = true
        let before = events.count
        refill()
        return events.count - before
    }

    // MARK: Removing

    /// Events that left through an answered flight: counted as sent; the window refills.
    mutating func sentOut(_ removed: [Item]) -> [Item] {
        sent &+= UInt64(removed.count)
        refill()
        return removed
    }

    /// Removes the events with these `messageId`s (the outbox dropped them) and reports one
    /// `offlineDrop` with `reason` (removal `removed`). - Returns: the events that were in memory.
    mutating func remove(messageIds: [String], reason: String, report: inout DeliveryReport<Item>) -> [Item] {
        let wanted = Set(messageIds)
        let gone = events.removeAll { wanted.contains($0.messageId) }
        refill()
        report.removals.append((gone, .removed))
        report.report(queueEvent(.offlineDrop, [
            "droppedCount": .number(JSONNumber(messageIds.count)), "droppedEvents": .array([]), "reason": .string(reason),
        ]), listing: gone)
        return gone
    }

    /// Discards everything in memory and forgets failures and waits (consent withdrawn: the
    /// caller purges its outbox); a flight in progress changes nothing on return.
    mutating func purge() {
        generation += 1
        _ = events.removeEverything()
        inFlight = []
        // The caller purges the outbox: nothing waits on disk, and its sequences may restart.
        spilled = false
        residentThrough = 0
        retry.reset()
    }

    // MARK: Answers

    /// Delivery stops for good (401/403/404): everything queued, in memory and on disk only, is
    /// discarded (removal `disabled`, one `deliveryDisabled`, an error log with counts only).
    /// `text` is the reason, without visitor data.
    mutating func disable(status: Int, text: String, report: inout DeliveryReport<Item>) {
        disabled = true
        let discarded = events.removeEverything() + discardStored()
        retry.reset()
        logger.error("\(text) \(discarded.count) queued event(s) discarded.")
        report.removals.append((discarded, .disabled))
        report.report(queueEvent(.deliveryDisabled, [
            "status": .number(JSONNumber(status)), "reason": .string(text), "droppedCount": .number(JSONNumber(discarded.count)),
        ]))
    }

    /// With an outbox, delivery disabled: every event waiting on disk only, for acknowledgement.
    private mutating func discardStored() -> [Item] {
        guard let outbox else { return [] }
        var gone: [Item] = []
        while spilled {
            let records = outbox.pendingRecords(queue: queue, after: residentThrough, limit: capacity)
            if records.isEmpty { break }
            for record in records {
                residentThrough = max(residentThrough, record.sequence)
                gone.append(Events.discarded(stored: record))
            }
        }
        spilled = false
        return gone
    }

    /// A retryable answer: the events stay queued, the backoff (and maybe the circuit) starts and
    /// `retry` is scheduled after it (`flushFailure`, and `circuitOpen` when it opened; `extra`
    /// joins the `flushFailure` context). Nothing is scheduled after close.
    mutating func recordFailure(
        reason: String, retryAfter: Double?, queuedBatches: Int, queuedEvents: Int, random: () -> Double,
        extra: OrderedDictionary<String, JSONValue> = [:], report: inout DeliveryReport<Item>,
        retry fire: @escaping @Sendable () -> Void
    ) {
        logger.warning("\(reason); \(queuedEvents) event(s) stay queued for retry.")
        guard !closed else { return }
        let failure = retry.recordFailure(now: clock.now(), retryAfter: retryAfter, policy: policy, random: random(), clock: clock, retry: fire)
        for (type, context) in failure.reportContexts(queuedBatches: queuedBatches, queuedEvents: queuedEvents) {
            var context = context
            if type == .flushFailure { context.merge(extra) { _, new in new } }
            report.report(queueEvent(type, context))
        }
    }

    /// An answered flight: the circuit closes, the wait and the retry end (`flushRecovered` after
    /// failures).
    mutating func recordSuccess(report: inout DeliveryReport<Item>) {
        guard !closed, let recovered = retry.recordSuccess() else { return }
        report.report(queueEvent(.flushRecovered, recovered))
    }

    // MARK: Flights

    /// Whether a flight may start now: online (or `despiteOffline`), no backoff wait, the circuit
    /// closed, not disabled or closed.
    func mayFlush(now: Double, despiteOffline: Bool = false) -> Bool {
        !closed && !disabled && (online || despiteOffline) && retry.allowsFlush(now: now)
    }

    /// What a flush asked for now finds.
    enum Gate {
        /// A flight is in progress: await it (a finishing one takes the flush as its follow-up).
        case inProgress(Task<Void, Never>)
        /// Nothing may be sent now, or nothing is queued (then the retry is cancelled).
        case shut
        /// A flight may start: ``launch(_:carrying:)`` it.
        case open
    }

    /// See ``Gate``. `hasEvents`: whether the queue has events a flight would send.
    mutating func gate(now: Double, despiteOffline: Bool, hasEvents: Bool) -> Gate {
        if let active {
            // A flight reporting its answer cannot take new events: the flush follows it.
            if finishing { flushRequested = true }
            return .inProgress(active)
        }
        guard hasEvents else {
            retry.cancelRetry()
            return .shut
        }
        return mayFlush(now: now, despiteOffline: despiteOffline) ? .open : .shut
    }

    /// Records the flight just started: it carries the events `ids`.
    mutating func launch(_ task: Task<Void, Never>, carrying ids: Set<UInt64>) {
        inFlight = ids
        active = task
    }

    /// The flight has its answer and is reporting it; it stays the flight in progress until
    /// ``end()``. - Returns: whether it still counts (no ``purge()`` since it began).
    mutating func answered(generation: Int) -> Bool {
        finishing = true
        inFlight = []
        return generation == self.generation
    }

    /// The flight's answer has been reported: it is over. - Returns: whether a flush was asked for
    /// meanwhile (it follows now).
    mutating func end() -> Bool {
        defer { flushRequested = false }
        active = nil
        finishing = false
        return flushRequested
    }

    /// Coming back online ends a backoff wait (the circuit stays as it is).
    /// - Returns: whether the queue came back online (it flushes).
    mutating func setOnline(_ online: Bool) -> Bool {
        defer { self.online = online }
        guard online, !self.online else { return false }
        retry.endWait()
        return true
    }

    /// Stops retries for good. - Returns: the flight in progress, if any.
    mutating func close() -> Task<Void, Never>? {
        closed = true
        retry.reset()
        return active
    }
}
