import Optimization
import Foundation
import JavaScriptHost
import MetricsTestKit
@testable import OptimizationPostgres
import OptimizationTesting
import PostgresNIO
import PostgresTestServer
import Testing

/// The outbox's dead letters: a row no replica can queue (its payload damaged in the table) is
/// moved to `outbox_dead_letters` and never blocks, or duplicates, the events around it.
@Suite struct OutboxDeadLetterTests {
    /// Message ids of the dead letters, in sequence order.
    static func deadLetters(_ database: OptimizationDatabase) async throws -> [String] {
        var ids: [String] = []
        for try await id in try await database.client.query(
            "SELECT message_id FROM optimization.outbox_dead_letters ORDER BY sequence").decode(String.self) {
            ids.append(id)
        }
        return ids
    }

    @Test func aDeadLetteredEventIsNeverClaimedAgainAndAnErasureDeletesIt() async throws {
        let metrics = TestMetrics()
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 1, metrics: [metrics]) { databases in
                let store = PostgresOutboxStore(database: databases[0])
                let records = try await store.append((0..<3).map { outboxEvent($0, profile: "p\($0 % 2)") })
                #expect(try await store.claim(queue: .insights, limit: 10).count == 3)
                #expect(try await store.deadLetter([records[1].sequence, 999_999]) == 1)
                #expect(try await store.deadLetter([records[1].sequence]) == 0, "moved once")
                try await store.release(records.map(\.sequence))
                #expect(try await store.claim(queue: .insights, limit: 10).map(\.messageId) == ["m-0", "m-2"])
                #expect(try await Self.deadLetters(databases[0]) == ["m-1"])
                #expect(try metrics.expectCounter("optimization_postgres_outbox_dead_letters_total").totalValue == 1)
                #expect(try await store.eraseProfile("p1") == 0)
                #expect(try await Self.deadLetters(databases[0]).isEmpty, "the erasure reached the dead letters")
            }
        }
    }

    @Test func aRowDamagedBySQLIsDeadLetteredAndTheOthersAreDeliveredOnce() async throws {
        let api = LocalOptimizationAPIServer()
        try await api.start()
        do {
            try await withPostgresTestServer { server in
                try await withDatabases(server, count: 2) { databases in
                    // A stores six clicks of two visitors and holds them: it cannot reach the API,
                    // and its clock stands still (it never renews).
                    let unreachable = "http://127.0.0.1:1/"
                    let a = Self.service(
                        PostgresOutboxStore(database: databases[0]), experience: unreachable + "experience/",
                        insights: unreachable + "insights/", clock: ManualClock())
                    try await a.start()
                    for index in 0..<6 {
                        _ = try await a.forRequest(RequestOptions(consent: true, profileId: "visitor-\(index % 2)"))
                            .trackClick(TrackClickPayload(componentId: "c\(index)"))
                    }
                    await a.flush()
                    let store = PostgresOutboxStore(database: databases[1])
                    #expect(try await store.claim(queue: .insights, limit: 10).isEmpty, "A holds them")

                    // The third row's payload is damaged (not even JSON) and A's leases run out.
                    var damaged = ""
                    for try await id in try await databases[1].client.query("""
                        UPDATE optimization.outbox_events SET payload = convert_to('not json', 'UTF8')
                        WHERE sequence = (SELECT sequence FROM optimization.outbox_events ORDER BY sequence OFFSET 2 LIMIT 1)
                        RETURNING message_id
                        """).decode(String.self) {
                        damaged = id
                    }
                    #expect(!damaged.isEmpty)
                    try await databases[1].client.query("UPDATE optimization.outbox_events SET lease_expires_at = now() - interval '1 second'")

                    let metrics = TestMetrics()
                    let clock = ManualClock()
                    let b = Self.service(store, experience: api.experienceBaseURL, insights: api.insightsBaseURL, clock: clock, metrics: metrics)
                    try await b.start()
                    for _ in 0..<3 { await b.flush() }   // at least three claims of the damaged row

                    let delivered = api.insightsEvents.compactMap { $0["messageId"]?.stringValue }
                    #expect(delivered.count == 5, "every event but the damaged one was delivered")
                    #expect(Set(delivered).count == delivered.count, "none twice")
                    #expect(!delivered.contains(damaged))
                    #expect(try await store.depth() == 0, "nothing is left in the queue")
                    #expect(try await Self.deadLetters(databases[1]) == [damaged])
                    #expect(try metrics.expectCounter("optimization_shared_outbox_dead_letters_total").totalValue == 1)
                    await b.shutdown()
                    await a.shutdown()
                    #expect(api.insightsEvents.count == 5, "nor at shutdown")
                }
            }
        } catch {
            try? await api.stop()
            throw error
        }
        try await api.stop()
    }

    static func service(
        _ store: PostgresOutboxStore, experience: String, insights: String, clock: ManualClock, metrics: TestMetrics = TestMetrics()
    ) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                clientId: "org-1", api: OptimizationAPIConfig(experienceBaseURL: experience, insightsBaseURL: insights)),
            options: .init(
                engines: 1, deliveryShards: 2, shutdownFlushTimeout: .seconds(30),
                sharedOutbox: SharedOutbox(store: store, pollInterval: .seconds(1), leaseRenewalInterval: .seconds(5), retryAfterFailure: .seconds(5))),
            environment: .init(clock: clock, metricsFactory: metrics))
    }
}
