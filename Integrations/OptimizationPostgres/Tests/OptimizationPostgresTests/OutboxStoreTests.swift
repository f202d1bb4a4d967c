import CoreMetrics
import Optimization
import Foundation
import MetricsTestKit
@testable import OptimizationPostgres
import PostgresTestServer
import Synchronization
import Testing

func outboxEvent(_ index: Int, profile: String?, bytes: Int = 16) -> OutboxEvent {
    let body = #"{"messageId":"m-\#(index)","pad":""# + String(repeating: "x", count: max(0, bytes - 30)) + #""}"#
    return OutboxEvent(queue: .insights, messageId: "m-\(index)", profileId: profile, consent: true, payload: Array(body.utf8))
}

/// Started databases on `server` (own pools: replicas), always shut down.
/// `metrics[i]`, when given, receives the metrics of database `i`.
func withDatabases<T>(
    _ server: PostgresTestServer, count: Int, schema: String = "optimization", operationTimeout: Duration = .milliseconds(1500),
    metrics: [any MetricsFactory] = [], _ body: ([OptimizationDatabase]) async throws -> T
) async throws -> T {
    var databases: [OptimizationDatabase] = []
    for index in 0..<count {
        let database = OptimizationDatabase(
            configuration: try PostgresConfiguration(
                connectionString: server.connectionString(), poolSize: 4, schema: schema, operationTimeout: operationTimeout),
            metricsFactory: metrics.indices.contains(index) ? metrics[index] : nil, logger: quietLogger)
        databases.append(database)
    }
    do {
        for database in databases { try await database.start() }
        let result = try await body(databases)
        for database in databases { await database.shutdown() }
        return result
    } catch {
        for database in databases { await database.shutdown() }
        throw error
    }
}

/// Events `metrics` counted as taken over from an expired lease.
func takeovers(_ metrics: TestMetrics) -> Int64 {
    (try? metrics.expectCounter("optimization_postgres_outbox_lease_takeovers_total").totalValue) ?? 0
}

/// When the lease of the event `sequence` ends (the database's clock).
func leaseExpiry(_ database: OptimizationDatabase, _ sequence: UInt64) async throws -> Date {
    let rows = try await database.client.query(
        "SELECT lease_expires_at FROM optimization.outbox_events WHERE sequence = \(Int64(sequence))", logger: quietLogger)
    for try await expiry in rows.decode(Date.self) { return expiry }
    throw WaitTimedOut(description: "no event \(sequence)")
}

/// The database's clock now.
func databaseClock(_ database: OptimizationDatabase) async throws -> Date {
    for try await now in try await database.client.query("SELECT clock_timestamp()", logger: quietLogger).decode(Date.self) {
        return now
    }
    throw WaitTimedOut(description: "no clock")
}

@Suite struct OutboxStoreTests {
    @Test func claimsKeepEachProfileWithOneReplicaInOrderAndAcknowledgementsDelete() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 2) { databases in
                let a = PostgresOutboxStore(database: databases[0])
                let b = PostgresOutboxStore(database: databases[1])
                let profiles = ["p1", "p2", "p1", "p3", "p2", "p1", nil, "p3"]
                let records = try await a.append(profiles.enumerated().map { outboxEvent($0.offset, profile: $0.element) })
                #expect(records.map(\.sequence) == records.map(\.sequence).sorted())
                #expect(try await a.depth() == 8)
                let first = try await a.claim(queue: .insights, limit: 3)       // p1, p2, p1
                #expect(first.map(\.messageId) == ["m-0", "m-1", "m-2"])
                // B gets only events whose profile has no earlier event leased to A.
                let second = try await b.claim(queue: .insights, limit: 10)
                #expect(second.map(\.messageId) == ["m-3", "m-6", "m-7"])   // p3, no profile, p3
                #expect(try await a.claim(queue: .experience, limit: 10).isEmpty)
                #expect(try await b.acknowledge(second.map(\.sequence)) == 3)
                // A fails to deliver and releases: p1 and p2 are claimable again, in order.
                try await a.release(first.map(\.sequence))
                let third = try await b.claim(queue: .insights, limit: 10)
                #expect(third.map(\.messageId) == ["m-0", "m-1", "m-2", "m-4", "m-5"])
                #expect(third.first?.payload == Array(#"{"messageId":"m-0","pad":""}"#.utf8))
                #expect(try await b.acknowledge(third.map(\.sequence)) == 5)
                #expect(try await a.depth() == 0)
            }
        }
    }

    @Test func aReplicaClaimsMoreOfAProfileItHoldsAndAnotherGetsNoneWhileTheLeaseLives() async throws {
        let metricsA = TestMetrics()
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 2, metrics: [metricsA]) { databases in
                #expect(databases[0].replicaId != databases[1].replicaId)
                let a = PostgresOutboxStore(database: databases[0])
                let b = PostgresOutboxStore(database: databases[1])
                try await a.append(["p", "p", "q", "p"].enumerated().map { outboxEvent($0.offset, profile: $0.element) })
                let first = try await a.claim(queue: .insights, limit: 1)     // p's first event
                #expect(first.map(\.messageId) == ["m-0"])
                // Another replica gets none of p's events while A's lease is live.
                let other = try await b.claim(queue: .insights, limit: 10)
                #expect(other.map(\.messageId) == ["m-2"])            // q only
                // A's second claim gets p's later events, in order.
                let second = try await a.claim(queue: .insights, limit: 10)
                #expect(second.map(\.messageId) == ["m-1", "m-3"])
                #expect(takeovers(metricsA) == 0)
                // B still gets nothing of p; once A gives p's first event back, p's later events
                // are still held by A's second claim.
                #expect(try await b.claim(queue: .insights, limit: 10).isEmpty)
                try await a.release(first.map(\.sequence))
                #expect(try await b.claim(queue: .insights, limit: 10).map(\.messageId) == ["m-0"])
            }
        }
    }

    @Test func renewedLeasesOutliveTheirOriginalExpiryAndOnlyThisReplicasAreRenewed() async throws {
        let metricsB = TestMetrics()
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 2, metrics: [TestMetrics(), metricsB]) { databases in
                let a = PostgresOutboxStore(database: databases[0], configuration: .init(leaseDuration: .seconds(2)))
                let b = PostgresOutboxStore(database: databases[1], configuration: .init(leaseDuration: .seconds(60)))
                try await a.append(["p", "p", "q", "r"].enumerated().map { outboxEvent($0.offset, profile: $0.element) })
                let held = try await a.claim(queue: .insights, limit: 2)                       // p's two events
                #expect(held.map(\.messageId) == ["m-0", "m-1"])
                let heldByB = try await b.claim(queue: .insights, limit: 1)                    // q's
                #expect(heldByB.map(\.messageId) == ["m-2"])
                let originalExpiry = try await leaseExpiry(databases[0], held[0].sequence)
                let expiryOfB = try await leaseExpiry(databases[0], heldByB[0].sequence)
                // A renews (every few milliseconds: hundreds of times within its 2 s lease) until
                // the database's clock is past the lease A's claim got.
                try await waitUntil("the original lease is over", timeout: .seconds(30)) {
                    try await a.renewLeases()
                    return try await databaseClock(databases[0]) > originalExpiry
                }
                // B takes none of A's events over: it gets r's event only.
                #expect(try await b.claim(queue: .insights, limit: 10).map(\.messageId) == ["m-3"])
                #expect(takeovers(metricsB) == 0)
                #expect(try await leaseExpiry(databases[0], held[1].sequence) > originalExpiry)
                // A's renewals left B's lease as it was.
                #expect(try await leaseExpiry(databases[0], heldByB[0].sequence) == expiryOfB)
            }
        }
    }

    @Test func releasedEventsAreClaimableAtOnceAndAReplicaReleasesOnlyWhatItHolds() async throws {
        let metricsB = TestMetrics()
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 2, metrics: [TestMetrics(), metricsB]) { databases in
                let a = PostgresOutboxStore(database: databases[0], configuration: .init(leaseDuration: .seconds(60)))
                let b = PostgresOutboxStore(database: databases[1], configuration: .init(leaseDuration: .seconds(60)))
                try await a.append(["p", "p", "q"].enumerated().map { outboxEvent($0.offset, profile: $0.element) })
                let heldByA = try await a.claim(queue: .insights, limit: 2)
                let heldByB = try await b.claim(queue: .insights, limit: 10)
                #expect(heldByA.map(\.messageId) == ["m-0", "m-1"] && heldByB.map(\.messageId) == ["m-2"])
                // A cannot give back B's event, nor one that does not exist.
                try await a.release(heldByB.map(\.sequence) + [999_999])
                #expect(try await a.claim(queue: .insights, limit: 10).isEmpty)
                // A gives its events back: B claims them at once, long before A's lease would end.
                try await a.release(heldByA.map(\.sequence))
                #expect(try await b.claim(queue: .insights, limit: 10).map(\.messageId) == ["m-0", "m-1"])
                #expect(takeovers(metricsB) == 0)
                // Released again by A, now that B holds them: nothing changes.
                try await a.release(heldByA.map(\.sequence))
                #expect(try await a.claim(queue: .insights, limit: 10).isEmpty)
                #expect(try await b.acknowledge((heldByA + heldByB).map(\.sequence)) == 3)
                try await a.release([])
            }
        }
    }

    @Test func boundsDropTheOldestAndReportThemAndErasureDeletesAProfile() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 1) { databases in
                let reports = Mutex<[OutboxDropReport]>([])
                let store = PostgresOutboxStore(database: databases[0], configuration: .init(
                    maxEvents: 5, maxBytes: 400, boundsCheckEvents: 1, onDrop: { report in reports.withLock { $0.append(report) } }))
                try await store.append((0..<4).map { outboxEvent($0, profile: "p\($0 % 2)") })
                try await store.append((4..<8).map { outboxEvent($0, profile: "p\($0 % 2)") })
                #expect(try await store.depth() == 5)
                let dropped = reports.withLock { $0 }
                #expect(dropped.count == 1 && dropped[0].reason == .maxEvents)
                #expect(dropped.first?.records.map(\.messageId) == ["m-0", "m-1", "m-2"])
                // 3 events of 100 bytes and more exceed 400 bytes with the 5 kept.
                try await store.append((8..<11).map { outboxEvent($0, profile: "p9", bytes: 100) })
                let byBytes = reports.withLock { $0 }.last
                #expect(byBytes?.reason == .maxBytes || byBytes?.reason == .maxEvents)
                #expect(try await store.depth() <= 5)
                // Erasure: every event of a profile, claimed or not.
                _ = try await store.claim(queue: .insights, limit: 1)
                let remaining = try await store.depth()
                let erased = try await store.eraseProfile("p9")
                #expect(erased > 0 && erased < remaining)
                #expect(try await store.depth() == remaining - erased)
                #expect(try await store.eraseProfile("p9") == 0)
            }
        }
    }

    @Test func anExpiredLeaseIsTakenOverAndAGoneDatabaseFailsPromptly() async throws {
        try await withPostgresTestServer { server in
            let metricsB = TestMetrics()
            try await withDatabases(server, count: 2, operationTimeout: .milliseconds(500), metrics: [TestMetrics(), metricsB]) { databases in
                let a = PostgresOutboxStore(database: databases[0], configuration: .init(leaseDuration: .milliseconds(300)))
                let b = PostgresOutboxStore(database: databases[1], configuration: .init(leaseDuration: .seconds(30)))
                try await a.append((0..<3).map { outboxEvent($0, profile: "p") })
                let lost = try await a.claim(queue: .insights, limit: 2)   // A "dies" holding it
                #expect(lost.count == 2)
                #expect(try await b.claim(queue: .insights, limit: 10).isEmpty)   // p's first events are leased
                var takeover: [OutboxRecord] = []
                try await waitUntil("the lease expires and B takes the events over") {
                    takeover = try await b.claim(queue: .insights, limit: 10)
                    return !takeover.isEmpty
                }
                #expect(takeover.map(\.messageId) == ["m-0", "m-1", "m-2"])
                #expect(takeovers(metricsB) == 2)
                // The database goes away: calls fail with a typed error within their bound.
                server.stop()
                let started = ContinuousClock.now
                await #expect(throws: PostgresIntegrationError.self) { try await b.append([outboxEvent(9, profile: "q")]) }
                await #expect(throws: PostgresIntegrationError.self) { try await b.claim(queue: .insights, limit: 1) }
                #expect(ContinuousClock.now - started < .seconds(10))
                try server.start()
                try await waitUntil("the pool reconnects") { (try? await b.depth()) == 3 }
            }
        }
    }
}
