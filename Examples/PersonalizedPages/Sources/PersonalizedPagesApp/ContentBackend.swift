import CoreMetrics
import Logging
import Optimization
import OptimizationPostgres
import ServiceLifecycle

/// The live content of `GET /cms/{id}`: a `ContentfulDeliverySource`, and with a PostgreSQL URL
/// the replicas' shared parts (an `OptimizationDatabase`, its `PostgresEntryStore` as the source's
/// entry store, and a `PostgresInvalidationBus` delivering every replica's invalidations).
///
/// As a `Service` it runs until graceful shutdown, then stops the bus, the source and the
/// database (in that order); put it first in the group so it stops last.
struct ContentBackend: Service {
    let source: ContentfulDeliverySource
    let database: OptimizationDatabase?
    let bus: PostgresInvalidationBus?

    /// Creates the source and, with `postgresURL`, starts the database (schema migration) and the
    /// bus, waiting (at most 30 s) until it listens, so no invalidation is missed once serving.
    static func start(
        contentful: ContentfulSettings, postgresURL: String?, metricsFactory: (any MetricsFactory)?, logger: Logger
    ) async throws -> ContentBackend {
        var database: OptimizationDatabase?
        if let postgresURL {
            let started = OptimizationDatabase(
                configuration: try PostgresConfiguration(connectionString: postgresURL), metricsFactory: metricsFactory, logger: logger)
            try await started.start()
            database = started
        }
        let source = try ContentfulDeliverySource(
            configuration: .init(spaceId: contentful.spaceId, environment: contentful.environment,
                                 accessToken: contentful.accessToken, baseURL: contentful.baseURL),
            entryStore: database.map(PostgresEntryStore.init(database:)), logger: logger)
        var bus: PostgresInvalidationBus?
        if let database {
            let listening = PostgresInvalidationBus(database: database, sources: [source])
            listening.start()
            let deadline = ContinuousClock.now + .seconds(30)
            while !listening.isListening {
                guard ContinuousClock.now < deadline else {
                    await listening.shutdown()
                    await database.shutdown()
                    throw PostgresIntegrationError.timedOut(operation: "invalidation bus LISTEN")
                }
                try await Task.sleep(for: .milliseconds(10))   // the bus's connection is real I/O
            }
            bus = listening
        }
        return ContentBackend(source: source, database: database, bus: bus)
    }

    func run() async throws {
        try? await gracefulShutdown()
        await bus?.shutdown()
        await source.shutdown()
        await database?.shutdown()
    }
}
