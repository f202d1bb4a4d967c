import EventOutbox
import Foundation
import OptimizationPostgres
import PostgresTestServer
import Testing

/// `pg_outbox_append_per_s` (one event per call, as a request appends it, 8 concurrent callers)
/// and `pg_outbox_drain_per_s` (claims of 100 acknowledged at once, one replica) on a private
/// server. Prints one JSON line; run it alone with `--filter OutboxBenchmarkTests` for figures.
@Suite struct OutboxBenchmarkTests {
    @Test func appendAndDrainRates() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 1) { databases in
                let store = PostgresOutboxStore(database: databases[0])
                let total = 2000
                let started = ContinuousClock.now
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<8 {
                        group.addTask {
                            for index in stride(from: worker, to: total, by: 8) {
                                try await store.append([outboxEvent(index, profile: "p\(index % 50)", bytes: 300)])
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let appendSeconds = Self.seconds(ContinuousClock.now - started)
                #expect(try await store.depth() == total)
                let drainStarted = ContinuousClock.now
                var drained = 0
                while true {
                    let claim = try await store.claim(queue: .insights, limit: 100)
                    if claim.isEmpty { break }
                    drained += try await store.acknowledge(claim.map(\.sequence))
                }
                let drainSeconds = Self.seconds(ContinuousClock.now - drainStarted)
                #expect(drained == total)
                print(#"{"pg_outbox_append_per_s":\#(Int(Double(total) / appendSeconds)),"pg_outbox_drain_per_s":\#(Int(Double(total) / drainSeconds)),"events":\#(total)}"#)
            }
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
