import Optimization
import Logging
import PostgresNIO
import Synchronization

/// The `ReplayLedger` every replica shares: committed replay-ticket ids in the table
/// `<schema>.replay_claims` (the ticket id as primary key, an expiry), so a ticket commits once
/// on whichever replica it reaches and once only across restarts.
///
/// - **Claim** is one statement: it inserts the id, or takes over a row whose expiry passed, and
///   tells which happened; two replicas claiming one id at once are decided by the unique key.
/// - **Expiry.** A row expires ``retention`` after its claim, by the database's clock (keep it at
///   least the tickets' lifetime, so a ticket cannot outlive its row). Expired rows are removed
///   in bulk, one `DELETE` by the expiry index, at most once per ``pruneInterval`` per replica,
///   by the claim that finds the interval passed.
/// - **Failures.** A claim that cannot reach the database in
///   ``PostgresConfiguration/operationTimeout`` throws (the replay route answers 503 and the
///   ticket is not spent); a failed prune is logged and tried again with a later claim.
///
/// `isSharedAcrossProcesses` is true: tickets are not bound to the issuing process.
///
/// **Threading.** `Sendable`; share one per database.
public final class PostgresReplayLedger: ReplayLedger {
    /// The database (started before the first claim).
    public let database: OptimizationDatabase
    /// How long a claimed id is kept.
    public let retention: Duration
    /// The shortest time between two bulk removals of expired rows by this replica.
    public let pruneInterval: Duration
    private let lastPrune = Mutex<ContinuousClock.Instant?>(nil)
    private var schema: String { database.configuration.schema }

    /// - Parameters:
    ///   - database: where the ids are kept.
    ///   - retention: how long an id is kept after its claim; at least the tickets' lifetime.
    ///   - pruneInterval: the shortest time between bulk removals of expired rows; default 1 minute.
    public init(database: OptimizationDatabase, retention: Duration, pruneInterval: Duration = .seconds(60)) {
        self.database = database
        self.retention = max(retention, .milliseconds(1))
        self.pruneInterval = pruneInterval
    }

    /// True: every replica using the database shares the record.
    public var isSharedAcrossProcesses: Bool { true }

    /// Records `id` as committed unless an unexpired row holds it.
    /// - Throws: ``PostgresIntegrationError`` when the database cannot be reached in time.
    public func claim(_ id: String) async throws -> ReplayClaim {
        let seconds = Double(retention.components.seconds) + Double(retention.components.attoseconds) / 1e18
        let claimed = try await database.run("replay claim") { [schema] client, logger in
            let rows = try await client.query("""
                INSERT INTO \(unescaped: schema).replay_claims AS r (ticket_id, expires_at)
                VALUES (\(id), clock_timestamp() + make_interval(secs => \(seconds)))
                ON CONFLICT (ticket_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
                WHERE r.expires_at <= clock_timestamp()
                RETURNING 1
                """, logger: logger)
            var claimed = false
            for try await _ in rows { claimed = true }
            return claimed
        }
        if isPruneDue() { await pruneExpired() }
        return claimed ? .claimed : .alreadyCommitted
    }

    /// Removes every expired row in one statement; returns how many (nil when the database
    /// could not be reached: logged, tried again later).
    @discardableResult
    public func pruneExpired() async -> Int? {
        try? await database.run("replay claims prune") { [schema] client, logger in
            let rows = try await client.query(
                "DELETE FROM \(unescaped: schema).replay_claims WHERE expires_at <= clock_timestamp() RETURNING 1", logger: logger)
            var removed = 0
            for try await _ in rows { removed += 1 }
            return removed
        }
    }

    /// True (and the time noted) when the last prune of this replica is older than the interval.
    private func isPruneDue() -> Bool {
        let now = ContinuousClock.now
        return lastPrune.withLock { last in
            if let previous = last, previous + pruneInterval > now { return false }
            last = now
            return true
        }
    }
}
