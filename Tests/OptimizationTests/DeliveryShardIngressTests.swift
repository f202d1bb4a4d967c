import Foundation
import JavaScriptHost
import MetricsTestKit
@testable import Optimization
import OptimizationTesting
import Synchronization
import Testing

/// The ingress of a delivery shard (`DeliveryShard`): many callers' items enter the queue in one
/// call into JavaScript, every caller returns once its own items were moved, and an item the
/// queue refuses is skipped alone, reported, and the failure is its caller's.
@Suite("Delivery shard ingress")
struct DeliveryShardIngressTests {
    /// What the concurrent callers saw: per caller, whether enqueue succeeded, whether it returned
    /// while the test still held the engine's lock, and how many of its items were queued then.
    final class Record: Sendable {
        let lockHeld = Atomic<Bool>(true)
        let results = Mutex<[Int: (succeeded: Bool, early: Bool, queued: Int)]>([:])
    }

    /// A `{profile, event}` item of `profile`, as the engine writes them.
    static func item(_ profile: String, _ index: Int) -> String {
        #"{"profile":{"id":"\#(profile)"},"event":{"type":"component","componentId":"c\#(index)","messageId":"m-\#(profile)-\#(index)"}}"#
    }

    /// Queued events of `profile`, counted by removing them (the queue offers no other view).
    static func takeQueued(_ profile: String, from shard: DeliveryShard) throws -> Int {
        Int(try shard.runtime.engine.call(BridgeContract.Service.eraseInsightsProfile, .string(profile)).numberValue ?? -1)
    }

    @Test func anItemTheQueueRefusesIsSkippedAloneReportedAndItsCallerGetsAnError() async throws {
        try await withLocalAPIServer { server in
            let metrics = TestMetrics()
            try await withService(server, deliveryShards: 1, metrics: metrics) { service in
                let shard = try #require(service.running?.delivery.shards.first)
                var reports = service.queueProbe()
                // Not a {profile, event} object, then not JSON at all: each skipped alone.
                for refused in [#"{"profile":{"id":"p"},"event":42}"#, "not json"] {
                    #expect(throws: OptimizationError.self) {
                        _ = try shard.enqueue([Self.item("p", 1), refused, Self.item("p", 2)])
                    }
                    #expect(try Self.takeQueued("p", from: shard) == 2, "the items before and after the refused one are queued")
                }
                let drops = await reports.newElements().filter { $0.type == .offlineDrop }
                #expect(drops.count == 2)
                #expect(drops.allSatisfy { $0.queue == .insights && $0.context["reason"] == "refused" && $0.context["droppedCount"] == 1 })
                #expect(try metrics.expectCounter("optimization_insights_refused_events_total").totalValue == 2)
            }
        }
    }

    @Test func concurrentCallersReturnOnlyOnceTheirItemsAreQueuedAndOnlyTheRefusedOnesCallerFails() async throws {
        try await withLocalAPIServer { server in
            let metrics = TestMetrics()
            try await withService(server, deliveryShards: 1, metrics: metrics) { service in
                let shard = try #require(service.running?.delivery.shards.first)
                let callers = 8
                let record = Record()
                let started = ContinuousClock.now
                shard.runtime.engine.withExclusiveAccess {
                    for caller in 0...callers {
                        Thread.detachNewThread {
                            // Caller `callers` carries a refused item between two good ones.
                            let profile = "p\(caller)"
                            let items = caller == callers
                                ? [Self.item(profile, 0), #"{"event":{}}"#, Self.item(profile, 1)]
                                : [Self.item(profile, 0), Self.item(profile, 1)]
                            let succeeded = (try? shard.enqueue(items)) != nil
                            let early = record.lockHeld.load(ordering: .acquiring)
                            let queued = (try? Self.takeQueued(profile, from: shard)) ?? -1
                            record.results.withLock { $0[caller] = (succeeded, early, queued) }
                        }
                    }
                    // Every caller's items wait: one call into JavaScript moves them together.
                    while shard.waitingCalls < callers + 1, ContinuousClock.now - started < hangBound {
                        Thread.sleep(forTimeInterval: 0.001)
                    }
                    record.lockHeld.store(false, ordering: .releasing)
                }
                try await eventually("every caller returned") { record.results.withLock { $0.count } == callers + 1 }
                let outcome = record.results.withLock { $0 }
                for caller in 0..<callers {
                    #expect(outcome[caller]?.succeeded == true, "caller \(caller) succeeded")
                    #expect(outcome[caller]?.early == false, "caller \(caller) returned only once its items were moved")
                    #expect(outcome[caller]?.queued == 2, "caller \(caller)'s items were in the queue when it returned")
                }
                #expect(outcome[callers]?.succeeded == false, "the caller whose item was refused gets an error")
                #expect(outcome[callers]?.queued == 2, "its other items are queued")
                #expect(try metrics.expectCounter("optimization_insights_refused_events_total").totalValue == 1)
            }
        }
    }
}
