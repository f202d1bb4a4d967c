import Optimization
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresOutboxStore {
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
    static func commit(
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
                sequence: UInt64(sequence), queue: EventQueueKind(rawValue: queue) ?? .insights, messageId: messageId, profileId: profileId,
                consent: consent, acceptedAt: acceptedAt, payload: Array(payload.readableBytesView)))
        }
        return records.sorted { $0.sequence < $1.sequence }
    }
}
