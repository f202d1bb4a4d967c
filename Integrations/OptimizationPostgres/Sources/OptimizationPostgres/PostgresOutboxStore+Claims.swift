import Optimization
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresOutboxStore {
    /// Claims at most `limit` (at least 1) of the oldest claimable events of `queue` (see the
    /// type's order rule) under a lease of ``PostgresOutboxConfiguration/leaseDuration``.
    /// - Returns: the leased records in sequence order (so in append order per profile); empty
    ///   when none is claimable.
    /// - Throws: ``PostgresIntegrationError``; then nothing was leased.
    public func claim(queue: EventQueueKind, limit: Int) async throws(PostgresIntegrationError) -> [OutboxRecord] {
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
                try await Self.lockClaims(of: EventQueueKind.allCases, connection: connection, logger: logger, schema: schema)
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
                try await Self.lockClaims(of: EventQueueKind.allCases, connection: connection, logger: logger, schema: schema)
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
        of queues: [EventQueueKind], connection: PostgresConnection, logger: Logger, schema: String
    ) async throws {
        for queue in queues.sorted(by: { $0.rawValue < $1.rawValue }) {
            let lockKey = "optimization-postgres-outbox:\(schema):\(queue.rawValue)"
            try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(lockKey), 0))", logger: logger)
        }
    }
}
