import Optimization
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The ``ContentfulEntryStore`` of a ``ContentfulDeliverySource`` in PostgreSQL: the table
/// `<schema>.contentful_entries` (space, environment, locale, entry id, revision, the document's
/// JSON text, fetched time, invalidated), shared by every replica using the same database.
///
/// - **Read-through**: the source reads the ids it misses; a starting replica serves the stored
///   copies without calling the CDA. Ages are measured by the database's clock.
/// - **Write-back with a revision guard**: a write replaces a stored copy only when its item
///   `sys.revision` is higher, or equal with a sum of include revisions not lower (so a late
///   writer never puts back an older variant), and never clears an invalidation with the copy
///   that was invalidated (same fingerprint). Concurrent writers are decided by the database, in
///   one statement.
/// - **Fetch claims** (single-flight across replicas): a row in `<schema>.fetch_claims` per entry,
///   held while one replica fetches it and expiring after
///   ``PostgresConfiguration/fetchClaimTimeout``; the others wait for it (polling, at most that
///   long), then read the copy it wrote. A replica that dies leaves a claim that expires.
/// - **Invalidation**: marks every copy that contains the entry (as item or include) and, in the
///   same transaction, sends the NOTIFY that ``PostgresInvalidationBus`` delivers to the other
///   replicas (delivered on commit, so a replica that receives it reads the marked rows).
///
/// Every call is bounded by ``PostgresConfiguration/operationTimeout``; when PostgreSQL is gone,
/// reads answer "nothing stored", writes are dropped (logged, counted in
/// `optimization_postgres_errors_total`), and the source keeps serving from memory and the CDA.
/// An invalidation that could not be written is kept in memory (at most
/// ``maximumPendingInvalidations``; beyond, they collapse into one invalidation of everything per
/// space and environment) and retried in the background with the bus's reconnect backoff until
/// it is written or the database is shut down, so the store's copies and the other replicas learn
/// of it once PostgreSQL is back (``pendingInvalidationCount``). Only failures that may pass are
/// retried (the database unreachable or timing out, a connection, resource or concurrency
/// error): an invalidation that can never be sent (its NOTIFY payload over PostgreSQL's 8000-byte
/// limit, or refused with any other error) is dropped at once, logged at `warning` and counted in
/// `optimization_postgres_invalidations_dropped_total`, and the ones queued behind it still go
/// out.
///
/// **Threading.** `Sendable`; one per database, shared by any number of sources.
public final class PostgresEntryStore: ContentfulEntryStore {
    /// The database.
    public let database: OptimizationDatabase
    /// Most invalidations kept for a retry while the database cannot be written.
    public static let maximumPendingInvalidations = 1000
    private var schema: String { database.configuration.schema }
    private struct Pending {
        var invalidations: [ContentfulInvalidation] = []
        var retrying = false
    }
    private let pending = Mutex(Pending())

    /// A store in `database` (which must be started before the store is used).
    public init(database: OptimizationDatabase) {
        self.database = database
    }

    /// The stored copies of `keys`; an empty answer when the database cannot be read in time.
    public func entries(for keys: [ContentfulEntryStoreKey]) async -> [ContentfulEntryStoreKey: ContentfulStoredEntry] {
        await entries(for: keys, counted: true)
    }

    /// `counted`: the read counts as hits and misses (the re-read under a claim does not).
    private func entries(for keys: [ContentfulEntryStoreKey], counted: Bool) async -> [ContentfulEntryStoreKey: ContentfulStoredEntry] {
        guard !keys.isEmpty else { return [:] }
        var found: [ContentfulEntryStoreKey: ContentfulStoredEntry] = [:]
        let groups = Dictionary(grouping: keys) { [$0.spaceId, $0.environment, $0.locale] }
        for (scope, grouped) in groups {
            let ids = grouped.map(\.entryId)
            let rows = try? await database.run("entry store read") { [schema] client, logger in
                try await Self.read(client: client, logger: logger, schema: schema, space: scope[0], environment: scope[1], locale: scope[2], ids: ids)
            }
            for row in rows ?? [] { found[row.key] = row }
        }
        if counted {
            database.metrics.storeHits.increment(by: found.count)
            database.metrics.storeMisses.increment(by: keys.count - found.count)
        }
        return found
    }

    /// Writes `entries` back under the revision guard; dropped (logged) when the database cannot
    /// be written in time.
    public func save(_ entries: [ContentfulStoredEntry]) async {
        guard !entries.isEmpty else { return }
        let written = try? await database.run("entry store write") { [schema] client, logger in
            var written = 0
            for entry in entries {
                if try await Self.write(entry, client: client, logger: logger, schema: schema) { written += 1 }
            }
            return written
        }
        if let written {
            database.metrics.storeWritten.increment(by: written)
            database.metrics.storeRefused.increment(by: entries.count - written)
        }
    }

    /// Holds the fetch claim of `key` while `fetch` runs (waiting at most
    /// ``PostgresConfiguration/fetchClaimTimeout`` for another replica's), then writes back and
    /// releases it. Without the database, `fetch` runs at once without a claim.
    public func withFetchClaim<Result: Sendable>(
        for key: ContentfulEntryStoreKey,
        _ fetch: (ContentfulStoredEntry?) async -> (result: Result, writeBack: ContentfulStoredEntry?)
    ) async -> Result {
        let claimKey = "\(key.spaceId)\u{1F}\(key.environment)\u{1F}\(key.locale)\u{1F}\(key.entryId)"
        let owner = "\(database.replicaId):\(UUID().uuidString.lowercased())"
        let timeout = database.configuration.fetchClaimTimeout
        let deadline = ContinuousClock.now + timeout
        var claimed = false
        var waited = false
        var pause = Duration.milliseconds(10)
        while true {
            let taken = try? await database.run("fetch claim") { [schema] client, logger in
                try await Self.claim(claimKey, owner: owner, lifetime: timeout, client: client, logger: logger, schema: schema)
            }
            guard let taken else { break }   // no database: fetch without the claim
            if taken {
                claimed = true
                break
            }
            waited = true
            guard ContinuousClock.now + pause < deadline else {
                database.metrics.claimsTimedOut.increment()
                database.logger.notice("another replica's fetch claim outlived the wait; fetching without it")
                break
            }
            try? await Task.sleep(for: pause)   // another replica is fetching this entry: poll its claim
            pause = min(pause * 2, .milliseconds(200))
        }
        if claimed { (waited ? database.metrics.claimsWaited : database.metrics.claimsClaimed).increment() }
        let current = await entries(for: [key], counted: false)[key]
        let (result, writeBack) = await fetch(current)
        if let writeBack { await save([writeBack]) }
        if claimed {
            _ = try? await database.run("fetch claim release") { [schema] client, logger in
                try await client.query(
                    "DELETE FROM \(unescaped: schema).fetch_claims WHERE claim_key = \(claimKey) AND owner = \(owner)", logger: logger)
            }
        }
        return result
    }

    /// Marks the copies containing the entry (or every copy of the space and environment) as
    /// invalidated and notifies the other replicas, in one transaction; kept for a retry when the
    /// database cannot be written (see the type's contract).
    public func invalidate(_ invalidation: ContentfulInvalidation) async {
        if await send(invalidation) == .retry { keepForRetry(invalidation) }
    }

    /// Invalidations waiting for the database to come back.
    public var pendingInvalidationCount: Int { pending.withLock { $0.invalidations.count } }

    private func keepForRetry(_ invalidation: ContentfulInvalidation) {
        let startRetrying = pending.withLock { pending -> Bool in
            pending.invalidations.append(invalidation)
            if pending.invalidations.count > Self.maximumPendingInvalidations {
                var scopes: [ContentfulInvalidation] = []
                for kept in pending.invalidations {
                    let all = ContentfulInvalidation(spaceId: kept.spaceId, environment: kept.environment, entryId: nil)
                    if !scopes.contains(all) { scopes.append(all) }
                }
                pending.invalidations = scopes
            }
            defer { pending.retrying = true }
            return !pending.retrying
        }
        if startRetrying { Task { await self.retryPending() } }
    }

    private func retryPending() async {
        var delay = database.configuration.reconnectDelay
        while database.isRunning {
            try? await Task.sleep(for: delay)   // the database is away: back off (real time)
            let batch = pending.withLock { $0.invalidations }
            var sent = 0   // written, or dropped for good
            for invalidation in batch {
                guard await send(invalidation) != .retry else { break }
                sent += 1
            }
            let done = pending.withLock { pending -> Bool in
                pending.invalidations.removeFirst(min(sent, pending.invalidations.count))
                if pending.invalidations.isEmpty { pending.retrying = false }
                return !pending.retrying
            }
            if done {
                database.logger.info("invalidations kept while PostgreSQL was away are written", metadata: ["count": "\(sent)"])
                return
            }
            delay = min(delay * 2, database.configuration.maximumReconnectDelay)
        }
        pending.withLock { $0.retrying = false }
    }

    /// What became of one attempt to send an invalidation.
    enum SendOutcome: Equatable {
        /// Written and notified.
        case sent
        /// A failure that may pass: keep it and try again.
        case retry
        /// It can never be sent: dropped (logged and counted).
        case dropped
    }

    /// Writes `invalidation` and its NOTIFY.
    func send(_ invalidation: ContentfulInvalidation) async -> SendOutcome {
        let payload = InvalidationMessage(origin: database.replicaId, invalidation: invalidation).encoded()
        guard payload.utf8.count <= InvalidationMessage.maximumPayloadBytes else {
            database.metrics.invalidationsTooLong.increment()
            database.logger.warning("an invalidation is too long to notify the other replicas; it is dropped", metadata: [
                "bytes": "\(payload.utf8.count)", "limit": "\(InvalidationMessage.maximumPayloadBytes)"])
            return .dropped
        }
        let channel = database.configuration.invalidationChannel
        let written: PostgresIntegrationError?
        do {
            written = try await database.run("invalidation") { [schema] client, logger -> PostgresIntegrationError? in
                do {
                    try await Self.writeInvalidation(invalidation, payload: payload, channel: channel, client: client, logger: logger, schema: schema)
                    return nil
                } catch where !OptimizationDatabase.isTransient(error) {
                    return OptimizationDatabase.integrationError(error, operation: "invalidation")
                }
            }
        } catch {
            return .retry
        }
        guard let refusal = written else { return .sent }
        database.metrics.invalidationsRefused.increment()
        database.metrics.error("invalidation")
        database.logger.warning("PostgreSQL refused an invalidation for good; it is dropped", metadata: [
            "error": "\(OptimizationDatabase.summary(refusal))"])
        database.logger.debug("refused invalidation detail", metadata: ["error": "\(refusal)"])
        return .dropped
    }

    /// The transaction of one invalidation: marks the stored copies, sends the NOTIFY.
    private static func writeInvalidation(
        _ invalidation: ContentfulInvalidation, payload: String, channel: String, client: PostgresClient, logger: Logger, schema: String
    ) async throws {
        try await client.withTransaction(logger: logger) { connection in
            if let id = invalidation.entryId {
                try await connection.query("""
                    UPDATE \(unescaped: schema).contentful_entries SET invalidated = true
                    WHERE space_id = \(invalidation.spaceId) AND environment = \(invalidation.environment)
                      AND (entry_id = \(id) OR referenced_ids @> ARRAY[\(id)]::text[])
                    """, logger: logger)
            } else {
                try await connection.query("""
                    UPDATE \(unescaped: schema).contentful_entries SET invalidated = true
                    WHERE space_id = \(invalidation.spaceId) AND environment = \(invalidation.environment)
                    """, logger: logger)
            }
            try await connection.query("SELECT pg_notify(\(channel), \(payload))", logger: logger)
        }
    }

    // MARK: Statements

    private static func read(
        client: PostgresClient, logger: Logger, schema: String, space: String, environment: String, locale: String, ids: [String]
    ) async throws -> [ContentfulStoredEntry] {
        let rows = try await client.query("""
            SELECT entry_id, revision, fingerprint, referenced_ids, document,
                   EXTRACT(EPOCH FROM (clock_timestamp() - fetched_at))::float8, invalidated
            FROM \(unescaped: schema).contentful_entries
            WHERE space_id = \(space) AND environment = \(environment) AND locale = \(locale) AND entry_id = ANY(\(ids))
            """, logger: logger)
        var found: [ContentfulStoredEntry] = []
        for try await (id, revision, fingerprint, referenced, document, ageSeconds, invalidated)
            in rows.decode((String, Int, String, [String], String, Double, Bool).self) {
            found.append(ContentfulStoredEntry(
                key: ContentfulEntryStoreKey(spaceId: space, environment: environment, locale: locale, entryId: id),
                revision: revision, fingerprint: fingerprint, referencedIds: referenced, jsonText: document,
                age: .milliseconds(Int64(max(0, ageSeconds) * 1000)), isInvalidated: invalidated))
        }
        return found
    }

    /// True when the guard let the write through.
    private static func write(_ entry: ContentfulStoredEntry, client: PostgresClient, logger: Logger, schema: String) async throws -> Bool {
        let key = entry.key
        let sum = entry.revisionSum
        let rows = try await client.query("""
            INSERT INTO \(unescaped: schema).contentful_entries AS e
                (space_id, environment, locale, entry_id, revision, revision_sum, fingerprint, referenced_ids, document, fetched_at, invalidated)
            VALUES (\(key.spaceId), \(key.environment), \(key.locale), \(key.entryId), \(entry.revision), \(sum),
                    \(entry.fingerprint), \(entry.referencedIds), \(entry.jsonText), clock_timestamp(), false)
            ON CONFLICT (space_id, environment, locale, entry_id) DO UPDATE SET
                revision = EXCLUDED.revision, revision_sum = EXCLUDED.revision_sum, fingerprint = EXCLUDED.fingerprint,
                referenced_ids = EXCLUDED.referenced_ids, document = EXCLUDED.document, fetched_at = EXCLUDED.fetched_at,
                invalidated = false
            WHERE EXCLUDED.revision > e.revision
               OR (EXCLUDED.revision = e.revision AND EXCLUDED.revision_sum >= e.revision_sum
                   AND NOT (e.invalidated AND e.fingerprint = EXCLUDED.fingerprint))
            RETURNING 1
            """, logger: logger)
        var written = false
        for try await _ in rows { written = true }
        return written
    }

    /// True when `owner` now holds the claim (it was free or expired).
    private static func claim(
        _ claimKey: String, owner: String, lifetime: Duration, client: PostgresClient, logger: Logger, schema: String
    ) async throws -> Bool {
        let milliseconds = Int(lifetime.components.seconds * 1000 + lifetime.components.attoseconds / 1_000_000_000_000_000)
        let rows = try await client.query("""
            INSERT INTO \(unescaped: schema).fetch_claims AS c (claim_key, owner, expires_at)
            VALUES (\(claimKey), \(owner), clock_timestamp() + make_interval(secs => \(Double(milliseconds) / 1000)))
            ON CONFLICT (claim_key) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
            WHERE c.expires_at < clock_timestamp()
            RETURNING 1
            """, logger: logger)
        var taken = false
        for try await _ in rows { taken = true }
        return taken
    }
}
