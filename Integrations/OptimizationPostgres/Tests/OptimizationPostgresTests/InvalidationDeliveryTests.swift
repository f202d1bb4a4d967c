import Optimization
import Foundation
import MetricsTestKit
@testable import OptimizationPostgres
import OptimizationTesting
import PostgresNIO
import PostgresTestServer
import Testing

/// How invalidations travel between replicas: over TLS when the connection string asks for it,
/// and an invalidation that can never be sent is dropped and reported instead of blocking the
/// ones behind it.
@Suite struct InvalidationDeliveryTests {
    @Test func onATLSOnlyServerTheBusListensOverTLSAndInvalidationsFlow() async throws {
        try await withPostgresTestServer(tlsOnly: true) { server in
            #expect(server.connectionString().hasSuffix("sslmode=require"))
            try await withLocalCDA { cda in
                // Replica.start waits until each bus listens: the LISTEN connection got in.
                let replicas = [try await Replica.start(server, cda: cda), try await Replica.start(server, cda: cda)]
                try await withReplicas(replicas) { replicas in
                    let (a, b) = (replicas[0], replicas[1])
                    _ = try await b.source.entry(id: "hero-home")
                    #expect(cda.space.publish(entryId: "hero-home", field: "internalTitle", value: "over TLS"))
                    try a.source.invalidate(entryId: "hero-home")
                    try await waitUntil("B received the invalidation") { b.bus.receivedCount == 1 }
                    try await waitUntil("B serves the new revision") { try await b.source.entry(id: "hero-home").text.contains("over TLS") }
                    // Every connection of the pool is encrypted (the server refuses the others).
                    var encrypted = false
                    for try await ssl in try await a.database.client.query(
                        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: quietLogger).decode(Bool.self) {
                        encrypted = ssl
                    }
                    #expect(encrypted)
                }
            }
        }
    }

    @Test func aTLSOnlyServerRefusesAConnectionWithoutTLS() async throws {
        try await withPostgresTestServer(tlsOnly: true) { server in
            let plain = OptimizationDatabase(
                configuration: try PostgresConfiguration(
                    connectionString: server.connectionString().replacingOccurrences(of: "sslmode=require", with: "sslmode=disable"),
                    operationTimeout: .milliseconds(500)),
                logger: quietLogger)
            await #expect(throws: PostgresIntegrationError.self) { try await plain.start() }
            await plain.shutdown()
        }
    }

    @Test func anOverLongInvalidationIsDroppedAndReportedAndTheNextStillGoesOut() async throws {
        try await withPostgresTestServer { server in
            try await withLocalCDA { cda in
                let metricsA = TestMetrics()
                let replicas = [try await Replica.start(server, cda: cda, metrics: metricsA), try await Replica.start(server, cda: cda)]
                try await withReplicas(replicas) { replicas in
                    let (a, b) = (replicas[0], replicas[1])
                    let space = cda.space.spaceId
                    await a.store.invalidate(ContentfulInvalidation(spaceId: space, environment: "master", entryId: String(repeating: "x", count: 9000)))
                    #expect(a.store.pendingInvalidationCount == 0, "not kept for a retry")
                    #expect(try metricsA.expectCounter("optimization_postgres_invalidations_dropped_total", [("reason", "too_long")]).totalValue == 1)
                    await a.store.invalidate(ContentfulInvalidation(spaceId: space, environment: "master", entryId: "hero-home"))
                    try await waitUntil("B received the next invalidation") { b.bus.receivedCount == 1 }
                    #expect(a.store.pendingInvalidationCount == 0)
                }
            }
        }
    }

    @Test func anInvalidationPostgreSQLRefusesForGoodDoesNotBlockTheOnesQueuedBehindIt() async throws {
        try await withPostgresTestServer { server in
            try await withLocalCDA { cda in
                let metricsA = TestMetrics()
                let replicas = [try await Replica.start(server, cda: cda, operationTimeout: .milliseconds(500), metrics: metricsA)]
                try await withReplicas(replicas) { replicas in
                    let a = replicas[0]
                    _ = try await a.source.entry(id: "hero-home")   // a stored copy to mark
                    let space = cda.space.spaceId
                    server.stop()
                    // Kept while the database is away: first one PostgreSQL will refuse (text
                    // cannot hold a NUL byte), then a good one.
                    await a.store.invalidate(ContentfulInvalidation(spaceId: space, environment: "master", entryId: "bad\u{0}id"))
                    await a.store.invalidate(ContentfulInvalidation(spaceId: space, environment: "master", entryId: "hero-home"))
                    #expect(a.store.pendingInvalidationCount == 2)
                    try server.start()
                    try await waitUntil("both left the queue") { a.store.pendingInvalidationCount == 0 }
                    #expect(try metricsA.expectCounter("optimization_postgres_invalidations_dropped_total", [("reason", "refused")]).totalValue == 1)
                    var invalidated = false
                    for try await marked in try await a.database.client.query(
                        "SELECT invalidated FROM optimization.contentful_entries WHERE entry_id = 'hero-home'", logger: quietLogger
                    ).decode(Bool.self) {
                        invalidated = marked
                    }
                    #expect(invalidated, "the invalidation behind the refused one was written")
                }
            }
        }
    }
}
