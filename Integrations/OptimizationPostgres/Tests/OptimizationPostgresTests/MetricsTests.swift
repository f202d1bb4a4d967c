import Optimization
import Foundation
import MetricsTestKit
import OptimizationPostgres
import OptimizationTesting
import PostgresTestServer
import Testing

@Suite struct MetricsTests {
    @Test func storeReadsWritesClaimsAndNotificationsAreCounted() async throws {
        try await withPostgresTestServer { server in
            try await withLocalCDA { cda in
                let (metricsA, metricsB) = (TestMetrics(), TestMetrics())
                let replicas = [try await Replica.start(server, cda: cda, metrics: metricsA),
                                try await Replica.start(server, cda: cda, metrics: metricsB)]
                try await withReplicas(replicas) { replicas in
                    let (a, b) = (replicas[0], replicas[1])
                    _ = try await a.source.entry(id: "hero-home")       // a miss, a claim, a write
                    _ = try await b.source.entry(id: "hero-home")       // a hit
                    try a.source.invalidate(entryId: "hero-home")
                    try await waitUntil("B received it") { b.bus.receivedCount == 1 }
                    #expect(try metricsA.expectCounter("optimization_postgres_entry_store_misses_total").totalValue == 1)
                    #expect(try metricsA.expectCounter("optimization_postgres_fetch_claims_total", [("result", "claimed")]).totalValue == 1)
                    #expect(try metricsA.expectCounter("optimization_postgres_entry_store_writes_total", [("result", "written")]).totalValue == 1)
                    #expect(try metricsB.expectCounter("optimization_postgres_entry_store_hits_total").totalValue == 1)
                    #expect(try metricsB.expectCounter("optimization_postgres_notifications_received_total").totalValue == 1)
                    #expect((try? metricsA.expectCounter("optimization_postgres_notifications_received_total").totalValue) ?? 0 == 0)
                }
            }
        }
    }
}
