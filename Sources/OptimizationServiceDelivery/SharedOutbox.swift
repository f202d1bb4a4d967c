import OptimizationDelivery

/// How an `OptimizationService` keeps its accepted Insights events in an outbox shared by all
/// replicas of the service (`OptimizationService/Options/sharedOutbox`), so that no event is
/// lost with a replica that is gone for good (for example a container replaced without its disk).
///
/// **How events flow.** An event call that the Insights API must hear of stores the event in
/// ``store`` before it returns (one commit per call). The event is not queued in memory by that
/// call: every replica claims stored events in batches (`SharedOutboxStore.claim(queue:limit:)`)
/// as its delivery queues have room, sends them with the usual delivery rules (batches per
/// profile, backoff, circuit breaker) and acknowledges each event once it has left the queue for
/// good (delivered, or refused by the API), which deletes it from the store. The replica that
/// stored an event normally claims it at once; a replica that dies leaves its claimed events to
/// the first replica that finds their lease expired. Delivery is at least once; a profile's
/// events are claimed in the order they were stored.
///
/// **While the store is away** (an append throws or times out): the call does not fail and does
/// not wait again for the store. Its events and those of the following calls are queued in this
/// replica's memory and delivered by it, as a service without an outbox does (lost if the process
/// dies), until ``retryAfterFailure`` has passed; then calls try the store again. Such events
/// are counted in `optimization_shared_outbox_events_total{result="memory"}` and logged once per
/// outage at `warning`. Resolution never touches the store.
///
/// **When the Insights API refuses the replica's credentials** (401, 403 or 404, which disables
/// the service's Insights delivery and is reported on `OptimizationService/queueEvents` as
/// `QueueEventType.deliveryDisabled`): the replica gives back every claimed event it held and claims none
/// after, so stored events wait for a replica that can deliver them (or for the store's bounds,
/// which report what they drop). Logged once at `error`.
///
/// **Events the queues refuse.** A stored event whose payload the delivery queue cannot take
/// (a row damaged in the store: not a `{profile, event}` JSON object) is given back to the store
/// alone; the events claimed with it are queued as usual (none is given back or delivered twice
/// because of it). Once this replica's queues refused it ``deadLetterAfterRefusals`` times it is
/// moved to the store's dead letters (`SharedOutboxStore.deadLetter(_:)`), counted in
/// `optimization_shared_outbox_dead_letters_total` and logged at `error` with the count only: it
/// never holds up the events stored after it.
///
/// **Leases.** Claimed events waiting in this replica's queues have their leases renewed every
/// ``leaseRenewalInterval`` (keep it well below the store's lease duration). At shutdown the
/// events still queued are given back (`SharedOutboxStore.release(_:)`) for another replica.
///
/// **Erasure.** `OptimizationService.eraseProfile(_:)` (async) erases a profile from this
/// replica's queues and from the store, which records it in its erasure log. Every replica reads
/// the log at each ``pollInterval`` tick and drops the erased profiles' queued events (counted in
/// `optimization_shared_outbox_erased_events_total`): within one poll interval none of them
/// leaves any replica (a request already in flight finishes). A replica claims nothing before
/// its first read of the log succeeded.
///
/// **Time.** The poll and renewal timers run on the service environment's clock.
public struct SharedOutbox: Sendable {
    /// Where the events are stored.
    public var store: any SharedOutboxStore
    /// How often the replica looks for claimable events besides right after its own appends (the
    /// events of replicas that died, or stored while this replica's queues were full) and reads
    /// the store's erasure log. Default 1 s.
    public var pollInterval: Duration
    /// How often the leases of the claimed events still queued here are renewed. Default 10 s.
    public var leaseRenewalInterval: Duration
    /// After an append failed, how long calls queue their events in memory before they try the
    /// store again. Default 5 s.
    public var retryAfterFailure: Duration
    /// Most events one claim takes. Default 500.
    public var claimBatchSize: Int
    /// How many times this replica's delivery queues may refuse a stored event before it is
    /// moved to the store's dead letters. Default 3; at least 1.
    public var deadLetterAfterRefusals: Int

    /// A shared outbox on `store`; each other parameter sets the property of the same name.
    public init(
        store: any SharedOutboxStore, pollInterval: Duration = .seconds(1), leaseRenewalInterval: Duration = .seconds(10),
        retryAfterFailure: Duration = .seconds(5), claimBatchSize: Int = 500, deadLetterAfterRefusals: Int = 3
    ) {
        self.store = store
        self.pollInterval = pollInterval
        self.leaseRenewalInterval = leaseRenewalInterval
        self.retryAfterFailure = retryAfterFailure
        self.claimBatchSize = claimBatchSize
        self.deadLetterAfterRefusals = deadLetterAfterRefusals
    }
}
