import CoreMetrics
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// One replica's connection to the PostgreSQL database its replicas share: a connection pool
/// (PostgresNIO's `PostgresClient`), the schema, metrics and the replica's identity. The entry
/// store, the invalidation bus and the outbox store use it.
///
/// ```swift
/// let database = try OptimizationDatabase(
///     configuration: .init(connectionString: "postgres://app@db:5432/content?sslmode=require"), logger: logger)
/// try await database.start()          // runs the pool, creates or migrates the schema
/// let store = PostgresEntryStore(database: database)
/// let source = try ContentfulDeliverySource(configuration: cda, entryStore: store, logger: logger)
/// let bus = PostgresInvalidationBus(database: database, sources: [source])
/// bus.start()
/// …
/// await bus.shutdown(); await database.shutdown()
/// ```
///
/// **Threading.** A `Sendable` class; share one per process. ``start()`` and ``shutdown()`` are
/// called once each.
///
/// **Logs.** Connection failures, timeouts and migrations at `notice`/`warning`/`info` (without
/// passwords or visitor data); anything naming a profile or an event only at `debug`.
public final class OptimizationDatabase: Sendable {
    /// The configuration.
    public let configuration: PostgresConfiguration
    /// This replica's identity (random per instance): it owns its fetch claims and outbox leases,
    /// and its own invalidations are not applied twice.
    public let replicaId: String
    let client: PostgresClient
    let logger: Logger
    let metrics: PostgresMetrics
    private let runner = Mutex<Task<Void, Never>?>(nil)

    /// A database connection that is not yet running.
    /// - Parameters:
    ///   - configuration: connection string, pool size, schema, timeouts.
    ///   - metricsFactory: receives the integration's metrics (`optimization_postgres_…`); nil
    ///     (the default) uses `MetricsSystem.factory` (no-op unless the process bootstrapped a
    ///     backend).
    ///   - logger: receives connection failures, timeouts and migrations (never passwords).
    public init(configuration: PostgresConfiguration, metricsFactory: (any MetricsFactory)? = nil, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        metrics = PostgresMetrics(factory: metricsFactory ?? MetricsSystem.factory)
        replicaId = UUID().uuidString.lowercased()
        var background = logger
        background.logLevel = max(logger.logLevel, .notice)
        client = PostgresClient(configuration: configuration.connection, backgroundLogger: background)
    }

    /// Runs the connection pool and creates or migrates the schema (idempotent; replicas starting
    /// at once take turns through an advisory lock). Bounded: gives up after 30 operation timeouts.
    /// - Returns: the schema version found before (0: the tables were created now).
    /// - Throws: ``PostgresIntegrationError``: the database is unreachable, refuses, or has a newer
    ///   schema than this build.
    @discardableResult
    public func start() async throws(PostgresIntegrationError) -> Int {
        runner.withLock { runner in
            guard runner == nil else { return }
            let client = self.client
            runner = Task { await client.run() }
        }
        let schema = configuration.schema
        do {
            let found = try await withDeadline(configuration.operationTimeout * 30, operation: "schema migration") { [client, logger] in
                try await PostgresSchema.migrate(client: client, schema: schema, logger: logger)
            }
            logger.info("PostgreSQL ready", metadata: [
                "database": "\(configuration.redactedConnectionString)", "schemaVersion": "\(PostgresSchema.currentVersion)"])
            return found
        } catch {
            throw Self.integrationError(error, operation: "schema migration")
        }
    }

    /// Closes the pool (queries in flight fail). Idempotent.
    public func shutdown() async {
        let task = runner.withLock { runner -> Task<Void, Never>? in
            defer { runner = nil }
            return runner
        }
        task?.cancel()
        await task?.value
    }

    /// True between ``start()`` and ``shutdown()``.
    public var isRunning: Bool { runner.withLock { $0 != nil } }

    /// The schema version the database has now.
    public func schemaVersion() async throws(PostgresIntegrationError) -> Int {
        let schema = configuration.schema
        return try await run("schema version") { client, logger in
            var found = 0
            for try await version in try await client.query(PostgresQuery(unsafeSQL: "SELECT version FROM \(schema).schema_version"), logger: logger).decode(Int.self) {
                found = max(found, version)
            }
            return found
        }
    }

    /// Runs `operation` on the pool within the operation timeout; failures become typed errors,
    /// are counted and logged (`notice`, without detail that could carry data; detail at debug).
    func run<T: Sendable>(
        _ name: String, timeout: Duration? = nil, _ operation: @escaping @Sendable (PostgresClient, Logger) async throws -> T
    ) async throws(PostgresIntegrationError) -> T {
        do {
            return try await withDeadline(timeout ?? configuration.operationTimeout, operation: name) { [client, logger] in
                try await operation(client, logger)
            }
        } catch {
            let typed = Self.integrationError(error, operation: name)
            metrics.error(name)
            logger.notice("PostgreSQL operation failed", metadata: ["operation": "\(name)", "error": "\(Self.summary(typed))"])
            logger.debug("PostgreSQL operation failure detail", metadata: ["operation": "\(name)", "error": "\(typed)"])
            throw typed
        }
    }

    /// `error` as a ``PostgresIntegrationError``.
    static func integrationError(_ error: any Error, operation: String) -> PostgresIntegrationError {
        if let typed = error as? PostgresIntegrationError { return typed }
        if let transaction = error as? PostgresTransactionError {
            if let inner = transaction.closureError ?? transaction.beginError ?? transaction.commitError {
                return integrationError(inner, operation: operation)
            }
        }
        if let psql = error as? PSQLError {
            var detail = "\(psql.code)"
            if let state = psql.serverInfo?[.sqlState] { detail += " SQLSTATE \(state)" }
            if let message = psql.serverInfo?[.message] { detail += ": \(message)" }
            return .database(operation: operation, detail: detail)
        }
        return .database(operation: operation, detail: "\(error)")
    }

    /// Whether `error` may pass if the operation is tried again: a timeout, a failed or lost
    /// connection (no SQLSTATE), or a server error of class 08 (connection), 40 (transaction
    /// rollback: serialization failure, deadlock), 53 (insufficient resources), 55 (object not in
    /// prerequisite state: a lock not available), 57 (operator intervention: shutdown, cancel),
    /// 58 (system error) or XX (internal error). Any other SQLSTATE (bad data, a value too long,
    /// a missing privilege or table) fails the same way again.
    static func isTransient(_ error: any Error) -> Bool {
        if let transaction = error as? PostgresTransactionError,
           let inner = transaction.closureError ?? transaction.beginError ?? transaction.commitError {
            return isTransient(inner)
        }
        guard let psql = error as? PSQLError, let state = psql.serverInfo?[.sqlState] else { return true }
        return ["08", "40", "53", "55", "57", "58", "XX"].contains(String(state.prefix(2)))
    }

    /// The error without the server's message (which may quote values): safe above debug.
    static func summary(_ error: PostgresIntegrationError) -> String {
        switch error {
        case .database(let operation, let detail):
            return "PostgreSQL \(operation) failed: \(detail.split(separator: ":").first ?? "")"
        default:
            return error.description
        }
    }
}
