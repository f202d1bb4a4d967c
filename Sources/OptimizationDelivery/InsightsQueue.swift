import HostPlatform
import Logging
import OptimizationJSON
import OrderedCollections
import Synchronization

/// The Insights delivery queue: accepted events, batched per profile, sent to the Insights API
/// by the rules of ``DeliveryPolicy``. No JavaScript runs on this path.
///
/// **Flushes.** A flush sends everything queued in ONE request (more only beyond the byte bound
/// or to bisect a refusal, below), with one `{profile, events}` batch per profile id (profiles in
/// the order their first event arrived). It starts when
/// ``DeliveryPolicy/flushThreshold`` events are queued, every ``DeliveryPolicy/flushInterval``
/// while events are queued, and on ``flush()``. One request is in flight at a time; events
/// accepted meanwhile wait for the next flush, and ``flush()`` called during a flight awaits it
/// and then sends them (no clock advance needed). A flight ends only once its answer has been
/// reported (the outbox acknowledged, `onRemoved` and `onQueueEvent` called); until then it is
/// still in flight (``flush()`` awaits it), and a flush asked for meanwhile (the threshold, a
/// timer, coming back online) follows it.
///
/// **Answers.** 2xx: the sent events leave the queue. 408/429/5xx or a transport failure: they
/// stay; the next flush waits the backoff (doubling from ``DeliveryPolicy/baseBackoff`` with
/// jitter, at least the server's `Retry-After`) and a retry is scheduled after it; after
/// ``DeliveryPolicy/maxConsecutiveFailures`` failures the circuit opens for
/// ``DeliveryPolicy/circuitOpenDuration``. While a backoff wait runs or the circuit is open **no
/// request leaves**, whatever timer fires and whether or not a flush is asked for. Other 4xx: the
/// API refuses the request; when it held several profiles' events the request is bisected (its
/// halves sent next, depth first) until the refused profiles are found: their events are dropped
/// (`batchDropped`, one per refused request), every other profile's are delivered. 401/403/404:
/// bisected the same way; a single profile's request refused while a 2xx of the same flush proved
/// the credential good is dropped like any refusal; otherwise it counts as a credential refusal,
/// retried with the backoff (`flushFailure` with `status` and `credentialRefusals`), and only
/// ``DeliveryPolicy/maxConsecutiveCredentialRefusals`` of them in a row (no 2xx between) stop
/// delivery for good and discard everything queued (`deliveryDisabled`). One visitor's events
/// thus never take another visitor's events down with them.
///
/// **Request size.** A flush's events are sent in as many requests as keep each body within
/// ``DeliveryPolicy/insightsMaxRequestBytes`` (sent one after the other in one flight); an event
/// too large for a request of its own is dropped unsent (`batchDropped`, status 413, a warning
/// with counts only).
///
/// **Capacity.** Without an outbox ``DeliveryPolicy/insightsMaxEvents`` is a cap: beyond it the
/// oldest events not in flight are dropped (reason `capped`, a warning). With a
/// `DurableOutbox` every accepted event is stored before ``enqueue(_:)`` returns (a failed write
/// fails the call and queues nothing of that event), the queue holds a window of the stored
/// backlog in memory (the rest waits on disk and is loaded, in order, as the window drains), and
/// every event that leaves the queue for good is acknowledged in the outbox.
///
/// **Reports.** Queue events (``QueueEvent``, queue `insights`) go to `onQueueEvent`; events that
/// left the queue for good go to `onRemoved` with their `messageId`s and the reason (a store
/// outside this queue, such as a shared outbox, acknowledges them there). Both are called outside
/// the queue's lock, on the thread that caused them; keep them short.
///
/// **Threading.** Every method is safe from any thread; the lock is never held across a suspension
/// or a callback. Timers run on the injected `HostClock`.
package final class InsightsQueue: Sendable {
    /// Why events left the queue for good (``InsightsQueue`` `onRemoved`).
    package enum Removal: String, Sendable {
        /// The API accepted them (2xx).
        case delivered
        /// The API refused their profile's batch (a 4xx), or they were too large to send
        /// (``DeliveryPolicy/insightsMaxRequestBytes``).
        case dropped
        /// Delivery was disabled (401/403/404, ``DeliveryPolicy/maxConsecutiveCredentialRefusals``
        /// in a row): everything queued was discarded.
        case disabled
        /// The queue was full (no outbox): the oldest were dropped.
        case capped
        /// Removed by ``removeMessages(_:reason:)`` (the outbox dropped them itself).
        case removed
    }

    /// What became of the events of one ``enqueue(_:)``.
    package struct Admission: Sendable, Equatable {
        /// Events in memory after the call.
        package var size: Int
        /// Positions of the events that were not queued because delivery is disabled (reported to
        /// `onRemoved` as `disabled`).
        package var discarded: [Int]
    }

    let url: String
    let policy: DeliveryPolicy
    let transport: any FetchTransport
    let clock: any HostClock
    let outbox: DurableOutbox?
    let logger: Logger
    let random: @Sendable () -> Double
    let onQueueEvent: @Sendable (QueueEvent) -> Void
    let onRemoved: (@Sendable (_ messageIds: [String], _ reason: Removal) -> Void)?
    let state: Mutex<State>

    /// One queued event: the event and, with an outbox, its stored sequence.
    struct Queued: Sendable {
        let id: UInt64
        let event: InsightsEvent
        let sequence: UInt64?
    }

    /// One profile's queued events.
    struct Bucket: Sendable {
        var profileJSON: String
        var events: [Queued]
    }

    /// What one flush sends.
    struct Snapshot: Sendable {
        var batches: [Bucket]
        var generation: Int
        /// Failed flights in a row before this one (`DeliveryAttempt/resendCount`).
        var resends = 0
        var count: Int { batches.reduce(0) { $0 + $1.events.count } }
    }

    /// The shared delivery mechanism over this queue's batches, and what only Insights delivery has.
    struct State: Sendable {
        var core: DeliveryQueueCore<Batches>
        /// 401/403/404 flights in a row that no 2xx contradicted (reset by a 2xx).
        var credentialRefusals = 0
        var periodicTimer: (any HostTimer)?
    }

    /// Reports gathered under the lock, delivered after it.
    struct Pending {
        var report = DeliveryReport<Queued>()
        var startFlush = false
    }

    /// - Parameters:
    ///   - url: the Insights API's events URL (``InsightsEndpoint``).
    ///   - policy: the delivery numbers.
    ///   - transport: carries the requests (its timeouts bound each one).
    ///   - clock: time and timers (a `ManualClock` in tests).
    ///   - outbox: a durable outbox to store every event in before it is accepted, or nil.
    ///   - logger: counts and statuses only, never an event's content.
    ///   - random: the jitter's source, a number in [0, 1).
    ///   - onQueueEvent: the queue's reports.
    ///   - onRemoved: events that left the queue for good, by `messageId`.
    package init(
        url: String, policy: DeliveryPolicy, transport: any FetchTransport, clock: any HostClock, outbox: DurableOutbox? = nil,
        logger: Logger, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        onQueueEvent: @escaping @Sendable (QueueEvent) -> Void = { _ in },
        onRemoved: (@Sendable (_ messageIds: [String], _ reason: Removal) -> Void)? = nil
    ) {
        self.url = url
        self.policy = policy
        self.transport = transport
        self.clock = clock
        self.outbox = outbox
        self.logger = logger
        self.random = random
        self.onQueueEvent = onQueueEvent
        self.onRemoved = onRemoved
        state = Mutex(State(core: DeliveryQueueCore(
            queue: .insights, capacity: policy.insightsMaxEvents, policy: policy, clock: clock, outbox: outbox, logger: logger)))
    }

    // MARK: Accepting

    /// Puts events into their profiles' batches (with an outbox: stores each first), in order.
    /// Never sends synchronously: reaching the flush threshold starts a flush in a task.
    /// - Returns: what became of them (see ``Admission``).
    /// - Throws: ``DeliveryQueueError/closed`` after ``close()`` (none queued);
    ///   ``DeliveryQueueError/notStored(_:)`` when the outbox could not store an event: it and the
    ///   events after it are not queued, those before it are.
    @discardableResult
    package func enqueue(_ events: [InsightsEvent]) throws(DeliveryQueueError) -> Admission {
        try enqueue(events, held: false)
    }

    /// ``enqueue(_:)``; `held` events wait for the visitor's first profile.
    func enqueue(_ events: [InsightsEvent], held: Bool) throws(DeliveryQueueError) -> Admission {
        var pending = Pending()
        let result = state.withLock { state -> Result<Admission, DeliveryQueueError> in
            guard !state.core.closed else { return .failure(.closed) }
            if state.core.disabled {
                logger.debug("Insights delivery is disabled; events were discarded", metadata: ["count": "\(events.count)"])
                if outbox == nil {
                    pending.report.removals.append((events.map { Queued(id: 0, event: $0, sequence: nil) }, .disabled))
                }
                return .success(Admission(size: state.core.events.count, discarded: Array(events.indices)))
            }
            var failure: DeliveryQueueError?
            for event in events {
                let entry = Batches.Entry(event: event, held: held)
                if outbox != nil {
                    do throws(OutboxError) {
                        _ = try state.core.store(OutboxEvent(
                            queue: .insights, messageId: event.messageId, profileId: held || event.profileId.isEmpty ? nil : event.profileId,
                            consent: event.consent, acceptedAt: clock.now(), payload: Array((held ? event.heldItemJSON : event.itemJSON).utf8)),
                            entry: entry)
                    } catch {
                        logger.warning("an accepted Insights event could not be stored; the call fails", metadata: ["error": "\(error)"])
                        failure = .notStored(error)
                        break
                    }
                } else {
                    state.core.makeRoom(report: &pending.report)
                    state.core.take(entry, sequence: nil)
                }
            }
            reconcileTimer(&state)
            // A finishing flight takes the flush as a follow-up (``beginFlush(despiteOffline:)``).
            pending.startFlush = state.core.events.sendable >= policy.flushThreshold && (state.core.active == nil || state.core.finishing)
            if let failure { return .failure(failure) }
            return .success(Admission(size: state.core.events.count, discarded: []))
        }
        deliver(pending)
        return try result.get()
    }

    /// Puts one event of the visitor (a client) into the batch of the visitor's current
    /// profile, or holds it until a profile exists; otherwise as ``enqueue(_:)``.
    /// - Parameters: the event's `messageId`, consent flag and JSON text.
    /// - Returns: events in memory after the call.
    /// - Throws: as ``enqueue(_:)``.
    @discardableResult
    package func enqueueForVisitor(messageId: String, consent: Bool, eventJSON: String) throws(DeliveryQueueError) -> Int {
        let profile = state.withLock { $0.core.events.visitorProfile }
        let event = InsightsEvent(
            profileId: profile?.id ?? "", profileJSON: profile?.json ?? "null", messageId: messageId, consent: consent, eventJSON: eventJSON)
        return try enqueue([event], held: profile == nil).size
    }

    /// The visitor's current profile changed (a client): later events join its batch, and events
    /// held while there was none join it now. nil: no profile (later events are held).
    package func visitorProfileChanged(_ profile: (id: String, json: String)?) {
        state.withLock { state in
            state.core.events.visitorProfile = profile
            state.core.events.adoptHeld()
            reconcileTimer(&state)
        }
    }

    /// Whether the network is reachable (a client's `setOnline`); while offline nothing is sent.
    /// Coming back online ends a backoff wait (the circuit stays as it is) and flushes.
    package func setOnline(_ online: Bool) {
        let restored = state.withLock { $0.core.setOnline(online) }
        if restored { startFlush() }
    }

    /// Events in memory (queued, held and in flight; with an outbox, its window).
    package var count: Int {
        state.withLock { $0.core.events.count }
    }

    /// Whether 401/403/404 stopped delivery for good.
    package var isDisabled: Bool {
        state.withLock { $0.core.disabled }
    }

    /// 401/403/404 answers in a row that no 2xx contradicted (0 after a 2xx); delivery is disabled
    /// when it reaches ``DeliveryPolicy/maxConsecutiveCredentialRefusals``.
    package var consecutiveCredentialRefusals: Int {
        state.withLock { $0.credentialRefusals }
    }

    /// Whether the circuit is open (nothing is sent until it has passed).
    package var isCircuitOpen: Bool {
        let now = clock.now()
        return state.withLock { $0.core.retry.isCircuitOpen(now: now) }
    }

    // MARK: Removing

    /// Removes one profile's events (erasure): with an outbox from disk first, then from memory,
    /// so the window is not refilled with them.
    /// - Returns: how many were removed (with an outbox: how many it held on disk, memory holding
    ///   copies).
    /// - Throws: ``DeliveryQueueError/notStored(_:)`` when the outbox could not erase them (memory is
    ///   left alone then).
    @discardableResult
    package func eraseProfile(_ profileId: String) throws(DeliveryQueueError) -> Int {
        var stored: Int?
        if let outbox {
            do {
                stored = try outbox.eraseProfile(profileId)
            } catch {
                throw .notStored(error)
            }
        }
        let inMemory = state.withLock { state -> Int in
            let removed = state.core.events.removeProfile(profileId)
            guard removed > 0 else { return 0 }
            state.core.refill()
            reconcileTimer(&state)
            return removed
        }
        return stored ?? inMemory
    }

    /// Removes the events with these `messageId`s (the outbox dropped them: a bound or the time
    /// to live) and reports one `offlineDrop` with `reason`.
    /// - Returns: how many were in memory.
    @discardableResult
    package func removeMessages(_ messageIds: [String], reason: String) -> Int {
        guard !messageIds.isEmpty else { return 0 }
        var pending = Pending()
        let gone = state.withLock { state -> [Queued] in
            let gone = state.core.remove(messageIds: messageIds, reason: reason, report: &pending.report)
            reconcileTimer(&state)
            return gone
        }
        deliver(pending)
        return gone.count
    }

    /// Discards everything in memory and forgets the failures (consent withdrawn: the caller
    /// purges its outbox). A request in flight finishes but changes nothing.
    package func purge() {
        state.withLock { state in
            state.core.purge()
            state.credentialRefusals = 0
            reconcileTimer(&state)
        }
    }

    // MARK: Lifecycle

    /// With an outbox: fills the window from the stored backlog (a restart) and arms the periodic
    /// flush. - Returns: how many stored events were loaded.
    @discardableResult
    package func resume() -> Int {
        guard outbox != nil else { return 0 }
        return state.withLock { state -> Int in
            let loaded = state.core.resume()
            state.core.events.adoptHeld()
            reconcileTimer(&state)
            return loaded
        }
    }

    /// Stops the timers and retries for good and cancels a request in flight; later
    /// ``enqueue(_:)`` calls throw and nothing more is reported. What is queued stays (with an
    /// outbox: on disk).
    package func close() {
        closeQueue()?.cancel()
    }

    /// A client's last, best-effort attempt (its `destroy()`): starts one more flush, also while
    /// offline (not during a backoff wait or an open circuit), then closes like ``close()`` but
    /// lets that request finish in the background.
    /// - Returns: the request in flight, if any (to await before shutting its transport down).
    @discardableResult
    package func closeAfterFinalFlush() -> Task<Void, Never>? {
        _ = beginFlush(despiteOffline: true)
        return closeQueue()
    }

    private func closeQueue() -> Task<Void, Never>? {
        state.withLock { state -> Task<Void, Never>? in
            let active = state.core.close()
            reconcileTimer(&state)
            return active
        }
    }

    // MARK: Reports

    /// Delivers what was gathered under the lock: acknowledgements, removals, queue events, and
    /// the flush the call asked for.
    func deliver(_ pending: Pending) {
        // A request still in flight after close() reports nothing.
        pending.report.deliver(outbox: outbox, isClosed: { state.withLock { $0.core.closed } }, onQueueEvent: onQueueEvent) {
            onRemoved?($0.map(\.event.messageId), $1)
        }
        if pending.startFlush { startFlush() }
    }
}

extension InsightsEvent {
    /// The event as a value, for reports that list dropped events.
    var eventValue: JSONValue {
        (try? JSONValue(jsonText: eventJSON)) ?? .object([:])
    }
}
