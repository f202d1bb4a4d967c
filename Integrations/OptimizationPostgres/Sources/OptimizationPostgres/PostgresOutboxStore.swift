import Optimization
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The storage of an event outbox shared by the replicas of a service, in the table
/// `<schema>.outbox_events`: a replica appends the events it accepted, any replica claims and
/// delivers them, and the events of a replica that died are delivered by another one. The
/// PostgreSQL ``SharedOutboxStore`` (`OptimizationService`'s `Options.sharedOutbox`).
///
/// **Contract** (the local `DurableOutbox`'s, across replicas):
/// - **Append** in the caller's call, with **group commit**: when ``append(_:)`` returns, the
///   events are committed. Calls that arrive while this replica's previous append transaction is
///   in flight are committed together by the next one (one multi-row `INSERT`), so a replica has
///   at most one append transaction open and a busy one commits many calls per transaction. Each
///   call gets its own records, in the order it gave the events; `sequence` numbers increase in
///   commit order, so within a call, and from one call of a caller to its next.
/// - **Claim** (``claim(queue:limit:)``): a batch of the oldest claimable events of a queue,
///   selected with `FOR UPDATE SKIP LOCKED` and leased to this replica for
///   ``PostgresOutboxConfiguration/leaseDuration``. **Order per profile**: an event is not
///   claimable while an earlier event of its profile is leased to another replica's live claim,
///   so one profile's events are delivered by one replica at a time, in sequence order (claims of
///   one queue are serialized with an advisory lock so two replicas never split a profile); this
///   replica may claim more events of a profile it already holds (claim owners are
///   `"<replicaId>:<claim id>"`). Events without a profile are independent.
/// - **Renew** (``renewLeases()``): extends every lease this replica holds to
///   ``PostgresOutboxConfiguration/leaseDuration`` from now. Call it well within the lease (for
///   example every third of it) while claimed events wait for delivery.
/// - **Acknowledge** (``acknowledge(_:)``): deletes delivered events (on a 2xx). **Release**
///   (``release(_:)``): gives leased events back at once (a failed delivery retried later, or
///   the events still held when the replica stops). Release a profile's events together (or its
///   later ones first): an earlier event given back while a later one is kept can be claimed by
///   another replica and delivered before it.
/// - **Dead letters** (``deadLetter(_:)``): events no replica can queue (a damaged payload) are
///   moved, in one statement, from the queue to `<schema>.outbox_dead_letters` (with their claim
///   count and the time), where no claim finds them; counted in
///   `optimization_postgres_outbox_dead_letters_total`. An erasure deletes a profile's dead
///   letters too.
/// - **Lease takeover**: events whose lease expired (the replica is gone) are claimable again;
///   counted in `optimization_postgres_outbox_lease_takeovers_total` and logged at `notice`.
///   Delivery is therefore at-least-once: a replica that delivered but died before acknowledging
///   sends them again.
/// - **Bounds**: beyond ``PostgresOutboxConfiguration/maxEvents`` or
///   ``PostgresOutboxConfiguration/maxBytes`` the oldest events are dropped in an append's
///   transaction and reported (``PostgresOutboxConfiguration/onDrop``, counted in
///   `optimization_postgres_outbox_dropped_total`). The bounds are checked by an append at most
///   ``PostgresOutboxConfiguration/boundsCheckInterval`` or
///   ``PostgresOutboxConfiguration/boundsCheckEvents`` after this store's previous check, not
///   on every append (the check scans the table): in between the table may exceed them.
/// - **Erasure**: ``eraseProfile(_:)`` deletes every event of a profile, claimed or not, and
///   records it in the erasure log `<schema>.outbox_erasures` in the same transaction;
///   ``erasures(after:)`` reads the log from a cursor (every replica's `OptimizationService`
///   does on each poll and drops that profile's events it claimed earlier). Entries are kept
///   for ``PostgresOutboxConfiguration/erasureRetention``; ``storedSequences(among:)`` is the
///   check of a replica whose cursor fell behind.
///
/// **Errors.** Every call is bounded by ``PostgresConfiguration/operationTimeout`` (an append
/// from its arrival, waiting for the transaction in flight included) and throws
/// ``PostgresIntegrationError`` when PostgreSQL is unreachable or refuses: an append that throws
/// stored nothing (the caller keeps the events, for example in its local outbox, or reports the
/// refusal); a failed group-commit transaction fails every call in it. One exception: an append
/// that timed out while PostgreSQL was committing it may have been stored (delivery stays at
/// least once).
///
/// **Threading.** `Sendable`; any number of concurrent callers and replicas. Cancelling an
/// append's task does not withdraw its events: it returns when its transaction ends.
public final class PostgresOutboxStore: SharedOutboxStore {
    /// The database.
    public let database: OptimizationDatabase
    /// Bounds and lease duration.
    public let configuration: PostgresOutboxConfiguration
    /// Group commit of the appends.
    let appender: OutboxAppendCoalescer
    var schema: String { database.configuration.schema }

    /// An outbox store in `database` (which must be started before it is used).
    public init(database: OptimizationDatabase, configuration: PostgresOutboxConfiguration = PostgresOutboxConfiguration()) {
        self.database = database
        self.configuration = configuration
        let schedule = BoundsSchedule()
        appender = OutboxAppendCoalescer(timeout: database.configuration.operationTimeout) {
            (events: [OutboxEvent], deadline: ContinuousClock.Instant) async throws(PostgresIntegrationError) -> [OutboxRecord] in
            try await Self.commit(events, deadline: deadline, database: database, configuration: configuration, schedule: schedule)
        }
    }

    /// Events waiting in the outbox (claimed or not), all replicas together.
    public func depth() async throws(PostgresIntegrationError) -> Int {
        let depth = try await database.run("outbox depth") { [schema] client, logger in
            var count = 0
            for try await value in try await client.query("SELECT count(*) FROM \(unescaped: schema).outbox_events", logger: logger).decode(Int.self) {
                count = value
            }
            return count
        }
        database.metrics.outboxDepth.record(depth)
        return depth
    }
}

