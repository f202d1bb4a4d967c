import Optimization
import Foundation
@testable import OptimizationPostgres
import PostgresTestServer
import Testing

/// `pg_outbox_append_per_s`: events stored per second by one replica serving requests, 16
/// concurrent tasks each appending 3 events (300 bytes each) per call, as a web service's
/// requests do (`append_transactions`: how many group-commit transactions they took); and
/// `pg_outbox_drain_per_s` (claims of 100 acknowledged at once, one replica) on a private
/// server. Prints one JSON line; run it alone with `--filter OutboxBenchmarkTests` for figures.
@Suite struct OutboxBenchmarkTests {
    @Test func appendAndDrainRates() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 1) { databases in
                let store = PostgresOutboxStore(database: databases[0])
                let (workers, callsPerWorker, eventsPerCall) = (16, 60, 3)
                let total = workers * callsPerWorker * eventsPerCall
                let started = ContinuousClock.now
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<workers {
                        group.addTask {
                            for call in 0..<callsPerWorker {
                                let first = (worker * callsPerWorker + call) * eventsPerCall
                                try await store.append((first..<first + eventsPerCall).map {
                                    outboxEvent($0, profile: "p\($0 % 50)", bytes: 300)
                                })
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
                print(#"{"pg_outbox_append_per_s":\#(Int(Double(total) / appendSeconds)),"pg_outbox_drain_per_s":\#(Int(Double(total) / drainSeconds)),"events":\#(total),"append_transactions":\#(store.appender.transactionCount)}"#)
            }
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
