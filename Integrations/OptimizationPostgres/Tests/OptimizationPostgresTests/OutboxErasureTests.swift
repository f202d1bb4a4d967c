import Optimization
import Foundation
import JavaScriptHost
@testable import OptimizationPostgres
import OptimizationTesting
import PostgresNIO
import PostgresTestServer
import Testing

/// Erasure across replicas through the PostgreSQL store's erasure log: the log itself (cursor,
/// pruning, the stored check of a replica that fell behind), then two `OptimizationService`
/// replicas on one server.
@Suite struct OutboxErasureTests {
    @Test func theErasureLogIsReadFromACursorAndAPrunedCursorIsToldSo() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 2) { databases in
                let a = PostgresOutboxStore(database: databases[0])
                let b = PostgresOutboxStore(database: databases[1])
                let start = try await b.erasures(after: nil)
                #expect(start.profileIds.isEmpty && start.isComplete, "a first read names nothing")
                try await a.append((0..<4).map { outboxEvent($0, profile: $0 % 2 == 0 ? "p1" : "p2") })
                let held = try await b.claim(queue: .insights, limit: 10)
                #expect(held.count == 4)
                #expect(try await a.eraseProfile("p1") == 2)
                let next = try await b.erasures(after: start.cursor)
                #expect(next.profileIds == ["p1"] && next.isComplete)
                let again = try await b.erasures(after: next.cursor)
                #expect(again.profileIds.isEmpty && again.isComplete && again.cursor == next.cursor)
                #expect(try await b.storedSequences(among: held.map(\.sequence)) == held.filter { $0.profileId == "p2" }.map(\.sequence))
                // The first entry ages past the retention (1 hour): the next erasure prunes it.
                try await databases[0].client.query("UPDATE optimization.outbox_erasures SET erased_at = erased_at - interval '2 hours'")
                #expect(try await a.eraseProfile("p3") == 0)
                let behind = try await b.erasures(after: start.cursor)
                #expect(!behind.isComplete, "entries after the cursor were pruned")
                #expect(behind.profileIds == ["p3"])
                let current = try await b.erasures(after: next.cursor)
                #expect(current.profileIds == ["p3"] && current.isComplete, "a cursor past the pruned entry misses nothing")
                #expect(try await b.erasures(after: nil).cursor == current.cursor)
            }
        }
    }

    @Test func aDatabaseOfSchemaVersion2IsMigratedAndItsEventsKept() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 1) { databases in
                let store = PostgresOutboxStore(database: databases[0])
                try await store.append([outboxEvent(0, profile: "p1")])
                // As a build of schema version 2 left it.
                try await databases[0].client.query(
                    "DROP TABLE optimization.outbox_erasures, optimization.outbox_erasure_horizon, optimization.outbox_dead_letters, optimization.replay_claims")
                try await databases[0].client.query("UPDATE optimization.schema_version SET version = 2")
                #expect(try await databases[0].start() == 2)
                #expect(try await databases[0].schemaVersion() == PostgresSchema.currentVersion)
                #expect(try await store.depth() == 1)
                #expect(try await store.eraseProfile("p1") == 1)
                #expect(try await store.erasures(after: 0).profileIds == ["p1"])
            }
        }
    }

    @Test func anErasureOnOneReplicaDropsTheEventsAnotherClaimedWithinOnePollInterval() async throws {
        let api = LocalOptimizationAPIServer()
        try await api.start()
        do {
            try await withPostgresTestServer { server in
                try await withDatabases(server, count: 2) { databases in
                    let clock = ManualClock()
                    let a = Self.service(PostgresOutboxStore(database: databases[0]), api: api, clock: clock)
                    let store = PostgresOutboxStore(database: databases[1])
                    let b = Self.service(store, api: api, clock: clock)
                    try await a.start()
                    try await b.start()
                    api.enqueue(contentsOf: Array(repeating: .status(503), count: 50), for: .insights)
                    for index in 0..<6 {
                        _ = try await b.forRequest(RequestOptions(consent: true, profileId: index % 2 == 0 ? "erased" : "kept"))
                            .trackClick(TrackClickPayload(componentId: "c\(index)"))
                    }
                    await b.flush()
                    #expect(b.queuedEventCount == 6, "B claimed every event and failed to send them")
                    #expect(try await store.claim(queue: .insights, limit: 10).isEmpty, "B holds them")

                    #expect(try await a.eraseProfile("erased") == 3)
                    clock.advance(by: .seconds(1))   // one poll interval
                    await b.flush()
                    #expect(b.queuedEventCount == 3, "B dropped the erased profile's events from memory")
                    api.clearScript()                // the API recovers
                    await b.flush()
                    await b.shutdown()
                    await a.shutdown()
                    let profiles = api.insightsBatches.map { $0["profile"]?["id"]?.stringValue ?? "?" }
                    #expect(!profiles.isEmpty && profiles.allSatisfy { $0 == "kept" }, "none of the erased profile's events is sent")
                    #expect(api.insightsEvents.count == 3)
                    #expect(try await store.depth() == 0)
                }
            }
        } catch {
            try? await api.stop()
            throw error
        }
        try await api.stop()
    }

    static func service(_ store: PostgresOutboxStore, api: LocalOptimizationAPIServer, clock: ManualClock) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                clientId: "org-1", api: OptimizationAPIConfig(experienceBaseURL: api.experienceBaseURL, insightsBaseURL: api.insightsBaseURL)),
            options: .init(
                engines: 1, deliveryShards: 1, shutdownFlushTimeout: .seconds(30),
                sharedOutbox: SharedOutbox(store: store, pollInterval: .seconds(1), leaseRenewalInterval: .seconds(5), retryAfterFailure: .seconds(5))),
            environment: .init(clock: clock))
    }
}
