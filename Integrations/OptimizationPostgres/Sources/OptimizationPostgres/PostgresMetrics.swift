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
/// | `optimization_postgres_outbox_depth` | gauge | events in the shared outbox (after each append, claim and acknowledgement) |
/// | `optimization_postgres_outbox_claims_total` | counter | claimed outbox batches |
/// | `optimization_postgres_outbox_lease_takeovers_total` | counter | events claimed from another replica's expired lease |
/// | `optimization_postgres_outbox_dropped_total` | counter | events refused or dropped by the outbox bounds |
/// | `optimization_postgres_errors_total` | counter | failed or timed-out database operations; `operation` names it |
struct PostgresMetrics: Sendable {
    let notificationsReceived = Counter(label: "optimization_postgres_notifications_received_total")
    let busReconnects = Counter(label: "optimization_postgres_bus_reconnects_total")
    let storeHits = Counter(label: "optimization_postgres_entry_store_hits_total")
    let storeMisses = Counter(label: "optimization_postgres_entry_store_misses_total")
    let storeWritten = Counter(label: "optimization_postgres_entry_store_writes_total", dimensions: [("result", "written")])
    let storeRefused = Counter(label: "optimization_postgres_entry_store_writes_total", dimensions: [("result", "refused")])
    let claimsClaimed = Counter(label: "optimization_postgres_fetch_claims_total", dimensions: [("result", "claimed")])
    let claimsWaited = Counter(label: "optimization_postgres_fetch_claims_total", dimensions: [("result", "waited")])
    let claimsTimedOut = Counter(label: "optimization_postgres_fetch_claims_total", dimensions: [("result", "timed_out")])
    let outboxDepth = Gauge(label: "optimization_postgres_outbox_depth")
    let outboxClaims = Counter(label: "optimization_postgres_outbox_claims_total")
    let outboxTakeovers = Counter(label: "optimization_postgres_outbox_lease_takeovers_total")
    let outboxDropped = Counter(label: "optimization_postgres_outbox_dropped_total")

    func error(_ operation: String) {
        Counter(label: "optimization_postgres_errors_total", dimensions: [("operation", operation)]).increment()
    }
}
