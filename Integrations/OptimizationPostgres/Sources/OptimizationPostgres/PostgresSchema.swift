import Logging
import PostgresNIO

/// The integration's tables, created and migrated by ``OptimizationDatabase/start()``: versioned
/// steps applied in order inside one transaction that first takes an advisory lock, so replicas
/// starting at once migrate one after the other (the later ones find nothing to do). Idempotent.
enum PostgresSchema {
    /// The newest schema version this build knows.
    static var currentVersion: Int { steps.count }

    /// Step `n` (1-based) brings the schema from version `n - 1` to `n`. `S` is the schema name.
    static let steps: [String] = [
        // 1: the shared entry store and its fetch claims.
        """
        CREATE TABLE S.contentful_entries (
            space_id text NOT NULL,
            environment text NOT NULL,
            locale text NOT NULL,
            entry_id text NOT NULL,
            revision bigint NOT NULL,
            revision_sum bigint NOT NULL,
            fingerprint text NOT NULL,
            referenced_ids text[] NOT NULL,
            document text NOT NULL,
            fetched_at timestamptz NOT NULL,
            invalidated boolean NOT NULL DEFAULT false,
            PRIMARY KEY (space_id, environment, locale, entry_id)
        );
        CREATE INDEX contentful_entries_referenced_ids ON S.contentful_entries USING gin (referenced_ids);
        CREATE TABLE S.fetch_claims (
            claim_key text PRIMARY KEY,
            owner text NOT NULL,
            expires_at timestamptz NOT NULL
        );
        """,
        // 2: the shared outbox.
        """
        CREATE TABLE S.outbox_events (
            sequence bigserial PRIMARY KEY,
            queue text NOT NULL,
            message_id text NOT NULL,
            profile_id text,
            consent boolean NOT NULL,
            accepted_at double precision NOT NULL,
            payload bytea NOT NULL,
            bytes integer NOT NULL,
            lease_owner text,
            lease_expires_at timestamptz,
            claims integer NOT NULL DEFAULT 0
        );
        CREATE INDEX outbox_events_queue ON S.outbox_events (queue, sequence);
        CREATE INDEX outbox_events_profile ON S.outbox_events (profile_id, sequence);
        """,
        // 3: the shared outbox's erasure log (read by every replica on each poll) and the newest
        // log id pruned from it.
        """
        CREATE TABLE S.outbox_erasures (
            id bigserial PRIMARY KEY,
            profile_id text NOT NULL,
            erased_at timestamptz NOT NULL
        );
        CREATE INDEX outbox_erasures_erased_at ON S.outbox_erasures (erased_at);
        CREATE TABLE S.outbox_erasure_horizon (
            pruned_through bigint NOT NULL
        );
        INSERT INTO S.outbox_erasure_horizon (pruned_through) VALUES (0);
        """,
        // 4: the shared outbox's dead letters: events moved out of the queue because no replica
        // could queue them (a damaged payload); never claimed, kept for an operator.
        """
        CREATE TABLE S.outbox_dead_letters (
            sequence bigint PRIMARY KEY,
            queue text NOT NULL,
            message_id text NOT NULL,
            profile_id text,
            consent boolean NOT NULL,
            accepted_at double precision NOT NULL,
            payload bytea NOT NULL,
            claims integer NOT NULL,
            dead_lettered_at timestamptz NOT NULL
        );
        CREATE INDEX outbox_dead_letters_profile ON S.outbox_dead_letters (profile_id);
        """,
        // 5: the committed replay tickets every replica shares (PostgresReplayLedger), pruned in
        // bulk by expiry.
        """
        CREATE TABLE S.replay_claims (
            ticket_id text PRIMARY KEY,
            expires_at timestamptz NOT NULL
        );
        CREATE INDEX replay_claims_expires_at ON S.replay_claims (expires_at);
        """,
    ]

    /// Creates the schema and applies the missing steps; returns the version found before.
    /// - Throws: ``PostgresIntegrationError/schemaTooNew(found:supported:)``, or the database error.
    static func migrate(client: PostgresClient, schema: String, logger: Logger) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            let lockKey = "optimization-postgres-schema:\(schema)"
            try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(lockKey), 0))", logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE TABLE IF NOT EXISTS \(schema).schema_version (version integer NOT NULL)"), logger: logger)
            var found = 0
            for try await version in try await connection.query(PostgresQuery(unsafeSQL: "SELECT version FROM \(schema).schema_version"), logger: logger).decode(Int.self) {
                found = max(found, version)
            }
            guard found <= currentVersion else { throw PostgresIntegrationError.schemaTooNew(found: found, supported: currentVersion) }
            for step in steps.indices.dropFirst(found) {
                for statement in steps[step].replacingOccurrences(of: "S.", with: "\(schema).").split(separator: ";")
                where !statement.allSatisfy(\.isWhitespace) {
                    try await connection.query(PostgresQuery(unsafeSQL: String(statement)), logger: logger)
                }
                logger.info("PostgreSQL schema migrated", metadata: ["schema": "\(schema)", "version": "\(step + 1)"])
            }
            try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(schema).schema_version"), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "INSERT INTO \(schema).schema_version (version) VALUES (\(max(found, currentVersion)))"), logger: logger)
            return found
        }
    }
}
