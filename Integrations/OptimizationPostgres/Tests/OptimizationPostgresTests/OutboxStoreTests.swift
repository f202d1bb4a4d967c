import EventOutbox
import Foundation
@testable import OptimizationPostgres
import PostgresTestServer
import Synchronization
import Testing

func outboxEvent(_ index: Int, profile: String?, bytes: Int = 16) -> OutboxEvent {
    let body = #"{"messageId":"m-\#(index)","pad":""# + String(repeating: "x", count: max(0, bytes - 30)) + #""}"#
    return OutboxEvent(queue: .insights, messageId: "m-\(index)", profileId: profile, consent: true, payload: Array(body.utf8))
}

/// Started databases on `server` (own pools: replicas), always shut down.
func withDatabases<T>(
    _ server: PostgresTestServer, count: Int, schema: String = "optimization", operationTimeout: Duration = .milliseconds(1500),
    _ body: ([OptimizationDatabase]) async throws -> T
) async throws -> T {
    var databases: [OptimizationDatabase] = []
    for _ in 0..<count {
        let database = OptimizationDatabase(
            configuration: try PostgresConfiguration(
                connectionString: server.connectionString(), poolSize: 4, schema: schema, operationTimeout: operationTimeout),
            logger: quietLogger)
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
                #expect(first.records.map(\.messageId) == ["m-0", "m-1", "m-2"])
                // B gets only events whose profile has no earlier event leased to A.
                let second = try await b.claim(queue: .insights, limit: 10)
                #expect(second.records.map(\.messageId) == ["m-3", "m-6", "m-7"])   // p3, no profile, p3
                #expect(try await a.claim(queue: .experience, limit: 10).records.isEmpty)
                #expect(try await b.acknowledge(second.records.map(\.sequence)) == 3)
                // A fails to deliver and releases: p1 and p2 are claimable again, in order.
                try await a.release(first)
                let third = try await b.claim(queue: .insights, limit: 10)
                #expect(third.records.map(\.messageId) == ["m-0", "m-1", "m-2", "m-4", "m-5"])
                #expect(third.records.first?.payload == Array(#"{"messageId":"m-0","pad":""}"#.utf8))
                #expect(try await b.acknowledge(third.records.map(\.sequence)) == 5)
                #expect(try await a.depth() == 0)
            }
        }
    }

    @Test func aReplicaClaimsMoreOfAProfileItHoldsAndAnotherGetsNoneWhileTheLeaseLives() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 2) { databases in
                #expect(databases[0].replicaId != databases[1].replicaId)
                let a = PostgresOutboxStore(database: databases[0])
                let b = PostgresOutboxStore(database: databases[1])
                try await a.append(["p", "p", "q", "p"].enumerated().map { outboxEvent($0.offset, profile: $0.element) })
                let first = try await a.claim(queue: .insights, limit: 1)     // p's first event
                #expect(first.records.map(\.messageId) == ["m-0"])
                // Another replica gets none of p's events while A's lease is live.
                let other = try await b.claim(queue: .insights, limit: 10)
                #expect(other.records.map(\.messageId) == ["m-2"])            // q only
                // A's second claim gets p's later events, in order.
                let second = try await a.claim(queue: .insights, limit: 10)
                #expect(second.records.map(\.messageId) == ["m-1", "m-3"])
                #expect(second.owner != first.owner && second.takenOver == 0)
                // B still gets nothing of p; once A gives p's first event back, p's later events
                // are still held by A's second claim.
                #expect(try await b.claim(queue: .insights, limit: 10).records.isEmpty)
                try await a.release(first)
                #expect(try await b.claim(queue: .insights, limit: 10).records.map(\.messageId) == ["m-0"])
            }
        }
    }

    @Test func boundsDropTheOldestAndReportThemAndErasureDeletesAProfile() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 1) { databases in
                let reports = Mutex<[OutboxDropReport]>([])
                let store = PostgresOutboxStore(database: databases[0], configuration: .init(
                    maxEvents: 5, maxBytes: 400, onDrop: { report in reports.withLock { $0.append(report) } }))
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
            try await withDatabases(server, count: 2, operationTimeout: .milliseconds(500)) { databases in
                let a = PostgresOutboxStore(database: databases[0], configuration: .init(leaseDuration: .milliseconds(300)))
                let b = PostgresOutboxStore(database: databases[1], configuration: .init(leaseDuration: .seconds(30)))
                try await a.append((0..<3).map { outboxEvent($0, profile: "p") })
                let lost = try await a.claim(queue: .insights, limit: 2)   // A "dies" holding it
                #expect(lost.records.count == 2)
                #expect(try await b.claim(queue: .insights, limit: 10).records.isEmpty)   // p's first events are leased
                var takeover = PostgresOutboxClaim(records: [], owner: "", takenOver: 0)
                try await waitUntil("the lease expires and B takes the events over") {
                    takeover = try await b.claim(queue: .insights, limit: 10)
                    return !takeover.records.isEmpty
                }
                #expect(takeover.records.map(\.messageId) == ["m-0", "m-1", "m-2"])
                #expect(takeover.takenOver == 2)
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
