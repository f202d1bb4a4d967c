import Optimization
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresOutboxStore {
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
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
