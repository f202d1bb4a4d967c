import Optimization
import Foundation
import OptimizationPostgres
import OptimizationTesting
import PostgresTestServer
import Testing

/// `pg_invalidation_fanout_ms`: from an invalidation on replica A to replica B serving the
/// refetched revision, over 40 rounds on one private server (two replicas in this process, each
/// with its own pool and LISTEN connection). Prints one JSON line (figures for BENCHMARKS; run it
/// alone with `--filter FanoutBenchmarkTests` for quiet-machine figures). The 1 s promise itself is
/// asserted by `InvalidationBusTests` and the example's `ReplicaTests`.
@Suite struct FanoutBenchmarkTests {
    @Test func invalidationFanout() async throws {
        try await withPostgresTestServer { server in
            try await withLocalCDA { cda in
                let replicas = [try await Replica.start(server, cda: cda), try await Replica.start(server, cda: cda)]
                try await withReplicas(replicas) { replicas in
                    let (a, b) = (replicas[0], replicas[1])
                    var samples: [Double] = []
                    for round in 0..<40 {
                        let served = try await b.source.entry(id: "promo-strip")
                        _ = try await a.source.entry(id: "promo-strip")
                        #expect(cda.space.publish(entryId: "promo-strip", field: "internalTitle", value: .string("round \(round)")))
                        let started = ContinuousClock.now
                        try a.source.invalidate(entryId: "promo-strip")
                        try await waitUntil("B serves round \(round)") {
                            try await b.source.entry(id: "promo-strip") !== served
                        }
                        let elapsed = ContinuousClock.now - started
                        samples.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
                    }
                    samples.sort()
                    let p50 = samples[samples.count / 2]
                    let p99 = samples[min(samples.count - 1, Int(Double(samples.count) * 0.99))]
                    print(#"{"pg_invalidation_fanout_ms":{"p50":\#((p50 * 10).rounded() / 10),"p99":\#((p99 * 10).rounded() / 10),"rounds":\#(samples.count)}}"#)
                    #expect(samples.count == 40)
                }
            }
        }
    }
}
