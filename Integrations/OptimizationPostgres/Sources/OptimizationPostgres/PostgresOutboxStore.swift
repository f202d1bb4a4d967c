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
    private var schema: String { database.configuration.schema }

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

    /// Appends `events`, in one transaction with the concurrent appends of this replica (group
    /// commit), and applies the bounds when they are due.
    /// - Returns: the stored records (with their sequence numbers), in the order given; an empty
    ///   array for no events (nothing is sent to PostgreSQL). Events without `acceptedAt` get the
    ///   time of the call (milliseconds since the Unix epoch).
    /// - Throws: ``PostgresIntegrationError``; then nothing was stored. At most
    ///   ``PostgresConfiguration/operationTimeout`` after the call (`timedOut`).
    @discardableResult
    public func append(_ events: [OutboxEvent]) async throws(PostgresIntegrationError) -> [OutboxRecord] {
        guard !events.isEmpty else { return [] }
        let now = Date().timeIntervalSince1970 * 1000
        return try await appender.append(events.map { event in
            var event = event
            if event.acceptedAt == nil { event.acceptedAt = now }
            return event
        })
    }

    /// One group-commit transaction: a multi-row `INSERT` of `events` (their `acceptedAt` set)
    /// and, when due, the bounds; given up at `deadline`. Reports drops before it returns.
    private static func commit(
        _ events: [OutboxEvent], deadline: ContinuousClock.Instant, database: OptimizationDatabase,
        configuration: PostgresOutboxConfiguration, schedule: BoundsSchedule
    ) async throws(PostgresIntegrationError) -> [OutboxRecord] {
        let started = ContinuousClock.now
        guard deadline > started else { throw .timedOut(operation: "outbox append") }
        let checkBounds = schedule.isDue(adding: events.count, at: started, configuration: configuration)
        let bounds = (configuration.maxEvents, configuration.maxBytes)
        let schema = database.configuration.schema
        let columns = AppendColumns(events)
        let (sequences, dropped, depth) = try await database.run("outbox append", timeout: deadline - started) { client, logger in
            // The INSERT alone is one atomic statement: a transaction (BEGIN, COMMIT: two more
            // round trips) only when the bounds are due too.
            guard checkBounds else {
                let sequences = try await client.withConnection { connection in
                    try await Self.insert(columns, connection: connection, logger: logger, schema: schema)
                }
                return (sequences, [OutboxDropReport](), Int?.none)
            }
            return try await client.withTransaction(logger: logger) { connection in
                let sequences = try await Self.insert(columns, connection: connection, logger: logger, schema: schema)
                let (dropped, depth) = try await Self.applyBounds(connection: connection, logger: logger, schema: schema, bounds: bounds)
                return (sequences, dropped, Int?.some(depth))
            }
        }
        schedule.committed(events.count, checked: checkBounds, at: started)
        if let depth { database.metrics.outboxDepth.record(depth) }
        for report in dropped {
            database.metrics.outboxDropped.increment(by: report.records.count)
            database.logger.notice("shared outbox bound reached; oldest events dropped",
                                   metadata: ["reason": "\(report.reason.rawValue)", "count": "\(report.records.count)"])
            configuration.onDrop?(report)
        }
        guard sequences.count == events.count else {   // never: the statement inserts one row per event
            throw .database(operation: "outbox append", detail: "\(sequences.count) rows stored for \(events.count) events")
        }
        return zip(sequences, events).map { sequence, event in
            OutboxRecord(
                sequence: UInt64(sequence), queue: event.queue, messageId: event.messageId, profileId: event.profileId,
                consent: event.consent, acceptedAt: event.acceptedAt ?? 0, payload: event.payload)
        }
    }

    /// Inserts the events of `columns` in one statement.
    /// - Returns: their sequence numbers, in the order of the events (increasing).
    private static func insert(
        _ columns: AppendColumns, connection: PostgresConnection, logger: Logger, schema: String
    ) async throws -> [Int64] {
        // `drawn` takes one number per event from the column's own sequence (bigserial), in any
        // order; `numbered` hands them out in increasing order to the events in the order given
        // (`position`), so the mapping does not depend on the order rows are inserted or
        // returned in.
        let rows = try await connection.query("""
            WITH input AS (
                SELECT * FROM unnest(\(columns.queues)::text[], \(columns.messageIds)::text[], \(columns.profileIds)::text[],
                                     \(columns.hasProfile)::boolean[], \(columns.consents)::boolean[],
                                     \(columns.acceptedAts)::double precision[], \(columns.payloads)::bytea[])
                    WITH ORDINALITY AS e(queue, message_id, profile_id, has_profile, consent, accepted_at, payload, position)
            ), drawn AS (
                SELECT nextval('\(unescaped: schema).outbox_events_sequence_seq') AS sequence FROM input
            ), numbered AS (
                SELECT sequence, row_number() OVER (ORDER BY sequence) AS position FROM drawn
            ), stored AS (
                INSERT INTO \(unescaped: schema).outbox_events
                    (sequence, queue, message_id, profile_id, consent, accepted_at, payload, bytes)
                SELECT n.sequence, e.queue, e.message_id, CASE WHEN e.has_profile THEN e.profile_id END, e.consent,
                       e.accepted_at, e.payload, octet_length(e.payload)
                FROM input e JOIN numbered n ON n.position = e.position
                RETURNING sequence
            )
            SELECT sequence FROM stored ORDER BY sequence
            """, logger: logger)
        var sequences: [Int64] = []
        sequences.reserveCapacity(columns.queues.count)
        for try await sequence in rows.decode(Int64.self) { sequences.append(sequence) }
        return sequences
    }

    /// Claims at most `limit` (at least 1) of the oldest claimable events of `queue` (see the
    /// type's order rule) under a lease of ``PostgresOutboxConfiguration/leaseDuration``.
    /// - Returns: the leased records in sequence order (so in append order per profile); empty
    ///   when none is claimable.
    /// - Throws: ``PostgresIntegrationError``; then nothing was leased.
    public func claim(queue: EventQueue, limit: Int) async throws(PostgresIntegrationError) -> [OutboxRecord] {
        let (ownerPrefix, prefixLength) = ownerPrefix
        let owner = "\(ownerPrefix)\(UUID().uuidString.lowercased())"
        let leaseSeconds = leaseSeconds
        let limit = max(1, limit)
        let (records, takenOver) = try await database.run("outbox claim") { [schema] client, logger in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.lockClaims(of: [queue], connection: connection, logger: logger, schema: schema)
                // One instant for every row (statement_timestamp, not the volatile clock_timestamp): a
                // lease expiring while the statement runs must not make a profile's later event
                // claimable while its earlier one is not.
                let rows = try await connection.query("""
                    WITH candidates AS (
                        SELECT e.sequence, e.lease_owner FROM \(unescaped: schema).outbox_events e
                        WHERE e.queue = \(queue.rawValue)
                          AND (e.lease_expires_at IS NULL OR e.lease_expires_at < statement_timestamp())
                          AND NOT EXISTS (
                              SELECT 1 FROM \(unescaped: schema).outbox_events o
                              WHERE o.profile_id = e.profile_id AND o.queue = e.queue AND o.sequence < e.sequence
                                AND o.lease_expires_at >= statement_timestamp()
                                AND left(o.lease_owner, \(prefixLength)) <> \(ownerPrefix))
                        ORDER BY e.sequence
                        LIMIT \(limit)
                        FOR UPDATE SKIP LOCKED
                    )
                    UPDATE \(unescaped: schema).outbox_events t
                    SET lease_owner = \(owner), lease_expires_at = clock_timestamp() + make_interval(secs => \(leaseSeconds)),
                        claims = t.claims + 1
                    FROM candidates c
                    WHERE t.sequence = c.sequence
                    RETURNING t.sequence, t.message_id, t.profile_id, t.consent, t.accepted_at, t.payload, c.lease_owner IS NOT NULL
                    """, logger: logger)
                var records: [OutboxRecord] = []
                var takenOver = 0
                for try await (sequence, messageId, profileId, consent, acceptedAt, payload, wasLeased)
                    in rows.decode((Int64, String, String?, Bool, Double, ByteBuffer, Bool).self) {
                    records.append(OutboxRecord(
                        sequence: UInt64(sequence), queue: queue, messageId: messageId, profileId: profileId, consent: consent,
                        acceptedAt: acceptedAt, payload: Array(payload.readableBytesView)))
                    if wasLeased { takenOver += 1 }
                }
                return (records.sorted { $0.sequence < $1.sequence }, takenOver)
            }
        }
        if !records.isEmpty { database.metrics.outboxClaims.increment() }
        if takenOver > 0 {
            database.metrics.outboxTakeovers.increment(by: takenOver)
            database.logger.notice("took over shared outbox events of an expired lease", metadata: ["count": "\(takenOver)"])
        }
        return records
    }

    /// Extends the lease of every event this replica holds (every claim of this store's
    /// ``OptimizationDatabase/replicaId``, including leases that ran out but that no other replica
    /// has claimed since) to ``PostgresOutboxConfiguration/leaseDuration`` from now. Events another
    /// replica took over stay with it. One statement scanning the table; claims of both queues
    /// wait for it (it takes their advisory locks, so a claim never sees a lease half renewed).
    /// - Throws: ``PostgresIntegrationError``; then no lease was extended.
    public func renewLeases() async throws(PostgresIntegrationError) {
        let (ownerPrefix, prefixLength) = ownerPrefix
        let leaseSeconds = leaseSeconds
        let renewed = try await database.run("outbox renew") { [schema] client, logger in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.lockClaims(of: EventQueue.allCases, connection: connection, logger: logger, schema: schema)
                // Rows locked in sequence order, as every multi-row statement of the store locks
                // them (acknowledgements, releases, erasures, bound drops), so that two of them
                // never deadlock (rows move on disk as their leases change: the physical order is
                // not the sequence order).
                var renewed = 0
                for try await _ in try await connection.query("""
                    UPDATE \(unescaped: schema).outbox_events t
                    SET lease_expires_at = clock_timestamp() + make_interval(secs => \(leaseSeconds))
                    FROM (SELECT sequence FROM \(unescaped: schema).outbox_events
                          WHERE left(lease_owner, \(prefixLength)) = \(ownerPrefix)
                          ORDER BY sequence FOR UPDATE) mine
                    WHERE t.sequence = mine.sequence
                    RETURNING 1
                    """, logger: logger) {
                    renewed += 1
                }
                return renewed
            }
        }
        database.logger.debug("renewed shared outbox leases", metadata: ["count": "\(renewed)"])
    }

    /// Deletes delivered events (whatever lease they are under now: they were delivered).
    /// - Returns: how many were deleted (fewer when some were already acknowledged or erased).
    /// - Throws: ``PostgresIntegrationError``; then none was deleted.
    @discardableResult
    public func acknowledge(_ sequences: [UInt64]) async throws(PostgresIntegrationError) -> Int {
        guard !sequences.isEmpty else { return 0 }
        let ids = sequences.map { Int64($0) }
        let deleted = try await database.run("outbox acknowledge") { [schema] client, logger in
            var deleted = 0
            for try await _ in try await client.query(
                """
                DELETE FROM \(unescaped: schema).outbox_events WHERE sequence IN (
                    SELECT sequence FROM \(unescaped: schema).outbox_events WHERE sequence = ANY(\(ids)) ORDER BY sequence FOR UPDATE)
                RETURNING 1
                """, logger: logger) {
                deleted += 1
            }
            return deleted
        }
        return deleted
    }

    /// Moves the events with these sequence numbers (leased by any replica or not) out of the
    /// queue into `<schema>.outbox_dead_letters`, in one statement: no claim returns them again.
    /// - Returns: how many were moved (fewer when some were already acknowledged, erased or
    ///   moved; unknown sequence numbers are ignored).
    /// - Throws: ``PostgresIntegrationError``; then none was moved.
    @discardableResult
    public func deadLetter(_ sequences: [UInt64]) async throws(PostgresIntegrationError) -> Int {
        guard !sequences.isEmpty else { return 0 }
        let ids = sequences.map { Int64(clamping: $0) }
        let moved = try await database.run("outbox dead letter") { [schema] client, logger in
            var moved = 0
            for try await _ in try await client.query(
                """
                WITH moved AS (
                    DELETE FROM \(unescaped: schema).outbox_events WHERE sequence IN (
                        SELECT sequence FROM \(unescaped: schema).outbox_events WHERE sequence = ANY(\(ids)) ORDER BY sequence FOR UPDATE)
                    RETURNING sequence, queue, message_id, profile_id, consent, accepted_at, payload, claims)
                INSERT INTO \(unescaped: schema).outbox_dead_letters
                    (sequence, queue, message_id, profile_id, consent, accepted_at, payload, claims, dead_lettered_at)
                SELECT sequence, queue, message_id, profile_id, consent, accepted_at, payload, claims, clock_timestamp() FROM moved
                ON CONFLICT (sequence) DO NOTHING
                RETURNING 1
                """, logger: logger) {
                moved += 1
            }
            return moved
        }
        if moved > 0 {
            database.metrics.outboxDeadLetters.increment(by: moved)
            // The service logs it once (at error); this is the store's trace.
            database.logger.debug("shared outbox events moved to the dead letters", metadata: ["count": "\(moved)"])
        }
        return moved
    }

    /// Gives the leases of these events back: they are claimable at once, by any replica. Only
    /// events this replica still holds are released (one another replica took over, acknowledged
    /// or erased is left as it is); unknown sequence numbers are ignored. Release a profile's
    /// events together (see the type's order rule). Claims of both queues wait for it.
    /// - Throws: ``PostgresIntegrationError``; then nothing was released.
    public func release(_ sequences: [UInt64]) async throws(PostgresIntegrationError) {
        guard !sequences.isEmpty else { return }
        let ids = sequences.map { Int64($0) }
        let (ownerPrefix, prefixLength) = ownerPrefix
        try await database.run("outbox release") { [schema] client, logger in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.lockClaims(of: EventQueue.allCases, connection: connection, logger: logger, schema: schema)
                try await connection.query("""
                    UPDATE \(unescaped: schema).outbox_events t SET lease_owner = NULL, lease_expires_at = NULL
                    FROM (SELECT sequence FROM \(unescaped: schema).outbox_events
                          WHERE sequence = ANY(\(ids)) AND left(lease_owner, \(prefixLength)) = \(ownerPrefix)
                          ORDER BY sequence FOR UPDATE) mine
                    WHERE t.sequence = mine.sequence
                    """, logger: logger)
                return ()
            }
        }
    }

    /// The start of this replica's lease owners, `"<replicaId>:"`, and its length in characters
    /// (`left()` counts characters and takes an int4): owners are compared with
    /// `left(lease_owner, length) = prefix`, which has no `LIKE` wildcards.
    private var ownerPrefix: (String, Int32) {
        let prefix = "\(database.replicaId):"
        return (prefix, Int32(prefix.unicodeScalars.count))
    }

    /// ``PostgresOutboxConfiguration/leaseDuration`` in seconds.
    private var leaseSeconds: Double {
        let lease = configuration.leaseDuration
        return Double(lease.components.seconds) + Double(lease.components.attoseconds) / 1e18
    }

    /// Takes the transaction-scoped advisory locks that serialize the claims of `queues` (in
    /// the order of their names, so two holders of several never deadlock). A claim takes its
    /// queue's; renewals and releases take every queue's, so that a claim never runs while they
    /// hold row locks: it would skip (`SKIP LOCKED`) an earlier event of a profile whose lease
    /// just ran out and take the later ones, splitting the profile.
    private static func lockClaims(
        of queues: [EventQueue], connection: PostgresConnection, logger: Logger, schema: String
    ) async throws {
        for queue in queues.sorted(by: { $0.rawValue < $1.rawValue }) {
            let lockKey = "optimization-postgres-outbox:\(schema):\(queue.rawValue)"
            try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(lockKey), 0))", logger: logger)
        }
    }

    /// Deletes every event of `profileId` (claimed or not) and records the erasure in the
    /// erasure log, in one transaction that also prunes the log entries older than
    /// ``PostgresOutboxConfiguration/erasureRetention``. Erasures take the log's advisory lock
    /// exclusively, so they commit one at a time in log order.
    /// - Returns: how many were deleted.
    /// - Throws: ``PostgresIntegrationError``; then nothing was deleted or recorded.
    @discardableResult
    public func eraseProfile(_ profileId: String) async throws(PostgresIntegrationError) -> Int {
        let retentionSeconds = max(1, Self.seconds(configuration.erasureRetention))
        return try await database.run("outbox erase") { [schema] client, logger in
            try await client.withTransaction(logger: logger) { connection in
                let lockKey = Self.erasureLockKey(schema)
                try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(lockKey), 0))", logger: logger)
                var deleted = 0
                for try await _ in try await connection.query(
                    """
                    DELETE FROM \(unescaped: schema).outbox_events WHERE sequence IN (
                        SELECT sequence FROM \(unescaped: schema).outbox_events WHERE profile_id = \(profileId) ORDER BY sequence FOR UPDATE)
                    RETURNING 1
                    """, logger: logger) {
                    deleted += 1
                }
                try await connection.query("""
                    DELETE FROM \(unescaped: schema).outbox_dead_letters WHERE profile_id = \(profileId)
                    """, logger: logger)
                try await connection.query("""
                    INSERT INTO \(unescaped: schema).outbox_erasures (profile_id, erased_at) VALUES (\(profileId), clock_timestamp())
                    """, logger: logger)
                try await connection.query("""
                    WITH pruned AS (
                        DELETE FROM \(unescaped: schema).outbox_erasures
                        WHERE erased_at < clock_timestamp() - make_interval(secs => \(retentionSeconds))
                        RETURNING id)
                    UPDATE \(unescaped: schema).outbox_erasure_horizon
                    SET pruned_through = GREATEST(pruned_through, (SELECT max(id) FROM pruned))
                    WHERE EXISTS (SELECT 1 FROM pruned)
                    """, logger: logger)
                return deleted
            }
        }
    }

    /// The profiles erased after `cursor` by any replica, from the erasure log
    /// (`<schema>.outbox_erasures`). Takes the log's advisory lock shared: an erasure in progress
    /// commits before the read, so no entry is skipped by a cursor that moved past it.
    /// - Parameter cursor: the previous answer's cursor; nil for the log's current end (no
    ///   profiles).
    /// - Returns: the profiles in log order; `isComplete` false when entries after `cursor` were
    ///   pruned (older than ``PostgresOutboxConfiguration/erasureRetention``).
    /// - Throws: ``PostgresIntegrationError``.
    public func erasures(after cursor: UInt64?) async throws(PostgresIntegrationError) -> SharedOutboxErasures {
        try await database.run("outbox erasure log") { [schema] client, logger in
            try await client.withTransaction(logger: logger) { connection in
                let lockKey = Self.erasureLockKey(schema)
                try await connection.query("SELECT pg_advisory_xact_lock_shared(hashtextextended(\(lockKey), 0))", logger: logger)
                var pruned: Int64 = 0
                var newest: Int64 = 0
                for try await (horizon, last) in try await connection.query("""
                    SELECT h.pruned_through, coalesce((SELECT max(id) FROM \(unescaped: schema).outbox_erasures), 0)
                    FROM \(unescaped: schema).outbox_erasure_horizon h
                    """, logger: logger).decode((Int64, Int64).self) {
                    (pruned, newest) = (max(pruned, horizon), last)
                }
                let end = UInt64(max(0, max(pruned, newest)))
                guard let cursor else { return SharedOutboxErasures(profileIds: [], cursor: end, isComplete: true) }
                var profileIds: [String] = []
                for try await profileId in try await connection.query("""
                    SELECT profile_id FROM \(unescaped: schema).outbox_erasures WHERE id > \(Int64(clamping: cursor)) ORDER BY id
                    """, logger: logger).decode(String.self) {
                    profileIds.append(profileId)
                }
                return SharedOutboxErasures(profileIds: profileIds, cursor: max(cursor, end), isComplete: cursor >= UInt64(max(0, pruned)))
            }
        }
    }

    /// Which of these events are still in the table (neither acknowledged, erased nor dropped).
    /// - Returns: the stored sequence numbers among `sequences`, in increasing order.
    /// - Throws: ``PostgresIntegrationError``.
    public func storedSequences(among sequences: [UInt64]) async throws(PostgresIntegrationError) -> [UInt64] {
        guard !sequences.isEmpty else { return [] }
        let ids = sequences.map { Int64(clamping: $0) }
        return try await database.run("outbox stored check") { [schema] client, logger in
            var stored: [UInt64] = []
            for try await sequence in try await client.query(
                "SELECT sequence FROM \(unescaped: schema).outbox_events WHERE sequence = ANY(\(ids)) ORDER BY sequence", logger: logger
            ).decode(Int64.self) {
                stored.append(UInt64(sequence))
            }
            return stored
        }
    }

    /// The advisory lock of the erasure log: erasures take it exclusively, readers shared.
    private static func erasureLockKey(_ schema: String) -> String {
        "optimization-postgres-outbox-erasures:\(schema)"
    }

    /// `duration` in seconds.
    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
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

    /// Drops the oldest events beyond the bounds; returns the drop reports and the depth.
    private static func applyBounds(
        connection: PostgresConnection, logger: Logger, schema: String, bounds: (maxEvents: Int, maxBytes: Int)
    ) async throws -> ([OutboxDropReport], Int) {
        var count = 0
        var bytes = 0
        for try await (c, b) in try await connection.query(
            "SELECT count(*)::bigint, coalesce(sum(bytes), 0)::bigint FROM \(unescaped: schema).outbox_events", logger: logger
        ).decode((Int, Int).self) {
            (count, bytes) = (c, b)
        }
        var reports: [OutboxDropReport] = []
        let now = Date().timeIntervalSince1970 * 1000
        if count > bounds.maxEvents {
            let excess = count - bounds.maxEvents
            let dropped = try await deleteOldest(connection: connection, logger: logger, schema: schema, limitCount: excess, limitBytes: nil)
            reports.append(OutboxDropReport(reason: .maxEvents, records: dropped, timestamp: now))
            count -= dropped.count
            bytes -= dropped.reduce(0) { $0 + $1.payload.count }
        }
        if bytes > bounds.maxBytes {
            let dropped = try await deleteOldest(
                connection: connection, logger: logger, schema: schema, limitCount: nil, limitBytes: bytes - bounds.maxBytes)
            reports.append(OutboxDropReport(reason: .maxBytes, records: dropped, timestamp: now))
            count -= dropped.count
        }
        return (reports, count)
    }

    /// Deletes the oldest `limitCount` events, or the oldest ones whose bytes add up to at least
    /// `limitBytes`.
    private static func deleteOldest(
        connection: PostgresConnection, logger: Logger, schema: String, limitCount: Int?, limitBytes: Int?
    ) async throws -> [OutboxRecord] {
        let rows: PostgresRowSequence
        if let limitCount {
            rows = try await connection.query("""
                DELETE FROM \(unescaped: schema).outbox_events WHERE sequence IN (
                    SELECT sequence FROM \(unescaped: schema).outbox_events ORDER BY sequence LIMIT \(limitCount) FOR UPDATE)
                RETURNING sequence, queue, message_id, profile_id, consent, accepted_at, payload
                """, logger: logger)
        } else {
            rows = try await connection.query("""
                DELETE FROM \(unescaped: schema).outbox_events WHERE sequence IN (
                    SELECT sequence FROM \(unescaped: schema).outbox_events WHERE sequence IN (
                        SELECT sequence FROM (
                            SELECT sequence, sum(bytes) OVER (ORDER BY sequence) - bytes AS before
                            FROM \(unescaped: schema).outbox_events) oldest
                        WHERE before < \(limitBytes ?? 0))
                    ORDER BY sequence FOR UPDATE)
                RETURNING sequence, queue, message_id, profile_id, consent, accepted_at, payload
                """, logger: logger)
        }
        var records: [OutboxRecord] = []
        for try await (sequence, queue, messageId, profileId, consent, acceptedAt, payload)
            in rows.decode((Int64, String, String, String?, Bool, Double, ByteBuffer).self) {
            records.append(OutboxRecord(
                sequence: UInt64(sequence), queue: EventQueue(rawValue: queue) ?? .insights, messageId: messageId, profileId: profileId,
                consent: consent, acceptedAt: acceptedAt, payload: Array(payload.readableBytesView)))
        }
        return records.sorted { $0.sequence < $1.sequence }
    }
}

/// When an append checks the bounds: this store's events and time since its last check
/// (``PostgresOutboxConfiguration/boundsCheckEvents``, ``PostgresOutboxConfiguration/boundsCheckInterval``).
final class BoundsSchedule: Sendable {
    private struct State {
        var eventsSinceCheck = 0
        var lastCheck: ContinuousClock.Instant?
    }
    private let state = Mutex(State())

    /// True when an append of `count` events starting `now` must check the bounds.
    func isDue(adding count: Int, at now: ContinuousClock.Instant, configuration: PostgresOutboxConfiguration) -> Bool {
        state.withLock { state in
            guard let lastCheck = state.lastCheck else { return true }
            return state.eventsSinceCheck + count >= configuration.boundsCheckEvents
                || now - lastCheck >= configuration.boundsCheckInterval
        }
    }

    /// An append of `count` events started at `started` committed (and checked the bounds when
    /// `checked`).
    func committed(_ count: Int, checked: Bool, at started: ContinuousClock.Instant) {
        state.withLock { state in
            if checked {
                state.eventsSinceCheck = 0
                state.lastCheck = started
            } else {
                state.eventsSinceCheck += count
            }
        }
    }
}

/// The events of one append transaction as the columns of its `unnest` (PostgresNIO binds arrays
/// of non-optional values: a missing profile is `""` with `hasProfile` false).
struct AppendColumns: Sendable {
    let queues: [String]
    let messageIds: [String]
    let profileIds: [String]
    let hasProfile: [Bool]
    let consents: [Bool]
    let acceptedAts: [Double]
    let payloads: [ByteBuffer]

    /// The columns of `events` (their `acceptedAt` set).
    init(_ events: [OutboxEvent]) {
        queues = events.map(\.queue.rawValue)
        messageIds = events.map(\.messageId)
        profileIds = events.map { $0.profileId ?? "" }
        hasProfile = events.map { $0.profileId != nil }
        consents = events.map(\.consent)
        acceptedAts = events.map { $0.acceptedAt ?? 0 }
        payloads = events.map { ByteBuffer(bytes: $0.payload) }
    }
}
