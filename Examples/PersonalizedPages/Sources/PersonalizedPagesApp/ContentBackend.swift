import Logging
import Optimization
import OptimizationPostgres
import ServiceLifecycle

/// The live content of `GET /cms/{id}`: a `ContentfulDeliverySource`, and with the replicas'
/// database (an `OptimizationDatabase`, started) its `PostgresEntryStore` as the source's entry
/// store and a `PostgresInvalidationBus` delivering every replica's invalidations.
///
/// As a `Service` it runs until graceful shutdown, then stops the bus and the source (in that
/// order); the database is the app's (``DatabaseLifetime``).
struct ContentBackend: Service {
    let source: ContentfulDeliverySource
    let bus: PostgresInvalidationBus?

    /// Creates the source and, with `database`, starts the bus, waiting (at most 30 s) until it
    /// listens, so no invalidation is missed once serving.
    static func start(contentful: ContentfulSettings, database: OptimizationDatabase?, logger: Logger) async throws -> ContentBackend {
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
                    throw PostgresIntegrationError.timedOut(operation: "invalidation bus LISTEN")
                }
                try await Task.sleep(for: .milliseconds(10))   // the bus's connection is real I/O
            }
            bus = listening
        }
        return ContentBackend(source: source, bus: bus)
    }

    func run() async throws {
        try? await gracefulShutdown()
        await bus?.shutdown()
        await source.shutdown()
    }
}

/// Keeps the replicas' database open until graceful shutdown, then closes it. First in the
/// service group, so it closes after everything that uses it has stopped.
struct DatabaseLifetime: Service {
    let database: OptimizationDatabase

    func run() async throws {
        try? await gracefulShutdown()
        await database.shutdown()
    }
}
