import Optimization
import CoreMetrics
import Foundation
import Logging
import OptimizationPostgres
import OptimizationTesting
import PostgresTestServer
import Testing

/// The repository's test space (`Fixtures/space/entries`).
let spaceEntriesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/space/entries")

let quietLogger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

/// A configuration for `server` with short bounds (the local server answers at once; a gone server
/// must be noticed quickly).
func testConfiguration(_ server: PostgresTestServer, operationTimeout: Duration = .milliseconds(1500),
                       fetchClaimTimeout: Duration = .seconds(5)) throws -> PostgresConfiguration {
    try PostgresConfiguration(
        connectionString: server.connectionString(), poolSize: 4, operationTimeout: operationTimeout,
        fetchClaimTimeout: fetchClaimTimeout, reconnectDelay: .milliseconds(50), maximumReconnectDelay: .milliseconds(400),
        heartbeatInterval: .milliseconds(500))
}

/// A local CDA serving the test space, always stopped.
func withLocalCDA<T>(_ body: (LocalContentfulDeliveryServer) async throws -> T) async throws -> T {
    let server = LocalContentfulDeliveryServer()
    try server.space.load(directory: spaceEntriesDirectory)
    try await server.start()
    do {
        let result = try await body(server)
        try await server.stop()
        return result
    } catch {
        try? await server.stop()
        throw error
    }
}

/// One replica of a service: its own database connection, entry store, source and bus.
struct Replica {
    let database: OptimizationDatabase
    let store: PostgresEntryStore
    let source: ContentfulDeliverySource
    let bus: PostgresInvalidationBus

    static func start(
        _ server: PostgresTestServer, cda: LocalContentfulDeliveryServer, cache: ContentfulCachePolicy = ContentfulCachePolicy(),
        operationTimeout: Duration = .milliseconds(1500), fetchClaimTimeout: Duration = .seconds(5), listen: Bool = true,
        metrics: (any MetricsFactory)? = nil
    ) async throws -> Replica {
        let database = OptimizationDatabase(
            configuration: try testConfiguration(server, operationTimeout: operationTimeout, fetchClaimTimeout: fetchClaimTimeout),
            metricsFactory: metrics, logger: quietLogger)
        try await database.start()
        let store = PostgresEntryStore(database: database)
        let source = try ContentfulDeliverySource(
            configuration: .init(spaceId: cda.space.spaceId, accessToken: cda.space.accessToken, baseURL: cda.baseURL,
                                 requestTimeout: .seconds(3), fetchDeadline: .seconds(6), maximumAttempts: 1),
            cachePolicy: cache, entryStore: store, logger: quietLogger)
        let bus = PostgresInvalidationBus(database: database, sources: [source])
        if listen {
            bus.start()
            try await waitUntil("the bus listens") { bus.isListening }
        }
        return Replica(database: database, store: store, source: source, bus: bus)
    }

    func stop() async {
        await bus.shutdown()
        await source.shutdown()
        await database.shutdown()
    }
}

/// Runs `body` with replicas that are always stopped.
func withReplicas<T>(_ replicas: [Replica], _ body: ([Replica]) async throws -> T) async throws -> T {
    do {
        let result = try await body(replicas)
        for replica in replicas { await replica.stop() }
        return result
    } catch {
        for replica in replicas { await replica.stop() }
        throw error
    }
}

struct WaitTimedOut: Error, CustomStringConvertible {
    let description: String
}

/// Polls `condition` (real I/O on the other side) every few milliseconds until it holds; throws
/// after `timeout`, a failure bound only (10x what it needs on a busy machine).
func waitUntil(_ what: String, timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    throw WaitTimedOut(description: "timed out waiting until \(what)")
}

/// The item `sys.revision` of an entry.
func revision(_ entry: ContentfulEntry) -> Int? {
    entry.document["items"]?.arrayValue?.first?["sys"]?["revision"]?.intValue
}

extension ContentfulEntry {
    /// The document as JSON text.
    var text: String { "\(document)" }
}
