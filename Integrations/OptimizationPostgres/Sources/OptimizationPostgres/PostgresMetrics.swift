import CoreMetrics

/// The integration's metrics (swift-metrics; whatever backend the process bootstrapped). Names:
///
/// | metric | kind | what |
/// |---|---|---|
/// | `optimization_postgres_notifications_received_total` | counter | invalidations received from other replicas |
/// | `optimization_postgres_bus_reconnects_total` | counter | times the invalidation bus listened again after losing its connection |
/// | `optimization_postgres_entry_store_hits_total` / `_misses_total` | counter | ids read from the entry store with / without a stored copy |
/// | `optimization_postgres_entry_store_writes_total` | counter | copies written back; `result` = `written` or `refused` (revision guard) |
/// | `optimization_postgres_fetch_claims_total` | counter | claims to fetch an entry; `result` = `claimed`, `waited` (another replica had it) or `timed_out` |
/// | `optimization_postgres_outbox_depth` | gauge | events in the shared outbox (at each bounds check of an append, and each `depth()`) |
/// | `optimization_postgres_outbox_claims_total` | counter | claimed outbox batches |
/// | `optimization_postgres_outbox_lease_takeovers_total` | counter | events claimed from another replica's expired lease |
/// | `optimization_postgres_outbox_dropped_total` | counter | events refused or dropped by the outbox bounds |
/// | `optimization_postgres_outbox_dead_letters_total` | counter | events moved to the outbox's dead letters (no replica could queue them) |
/// | `optimization_postgres_invalidations_dropped_total` | counter | invalidations that can never be sent (not retried); `reason` = `too_long` (the NOTIFY payload would exceed PostgreSQL's limit) or `refused` (PostgreSQL refused it with a non-transient error) |
/// | `optimization_postgres_errors_total` | counter | failed or timed-out database operations; `operation` names it |
struct PostgresMetrics: Sendable {
    let factory: any MetricsFactory
    let notificationsReceived: Counter
    let busReconnects: Counter
    let storeHits: Counter
    let storeMisses: Counter
    let storeWritten: Counter
    let storeRefused: Counter
    let claimsClaimed: Counter
    let claimsWaited: Counter
    let claimsTimedOut: Counter
    let outboxDepth: Gauge
    let outboxClaims: Counter
    let outboxTakeovers: Counter
    let outboxDropped: Counter
    let outboxDeadLetters: Counter
    let invalidationsTooLong: Counter
    let invalidationsRefused: Counter

    /// The metrics, created in `factory`.
    init(factory: any MetricsFactory) {
        self.factory = factory
        func counter(_ label: String, _ dimensions: [(String, String)] = []) -> Counter {
            Counter(label: label, dimensions: dimensions, factory: factory)
        }
        notificationsReceived = counter("optimization_postgres_notifications_received_total")
        busReconnects = counter("optimization_postgres_bus_reconnects_total")
        storeHits = counter("optimization_postgres_entry_store_hits_total")
        storeMisses = counter("optimization_postgres_entry_store_misses_total")
        storeWritten = counter("optimization_postgres_entry_store_writes_total", [("result", "written")])
        storeRefused = counter("optimization_postgres_entry_store_writes_total", [("result", "refused")])
        claimsClaimed = counter("optimization_postgres_fetch_claims_total", [("result", "claimed")])
        claimsWaited = counter("optimization_postgres_fetch_claims_total", [("result", "waited")])
        claimsTimedOut = counter("optimization_postgres_fetch_claims_total", [("result", "timed_out")])
        outboxDepth = Gauge(label: "optimization_postgres_outbox_depth", dimensions: [], factory: factory)
        outboxClaims = counter("optimization_postgres_outbox_claims_total")
        outboxTakeovers = counter("optimization_postgres_outbox_lease_takeovers_total")
        outboxDropped = counter("optimization_postgres_outbox_dropped_total")
        outboxDeadLetters = counter("optimization_postgres_outbox_dead_letters_total")
        invalidationsTooLong = counter("optimization_postgres_invalidations_dropped_total", [("reason", "too_long")])
        invalidationsRefused = counter("optimization_postgres_invalidations_dropped_total", [("reason", "refused")])
    }

    func error(_ operation: String) {
        Counter(label: "optimization_postgres_errors_total", dimensions: [("operation", operation)], factory: factory).increment()
    }
}
