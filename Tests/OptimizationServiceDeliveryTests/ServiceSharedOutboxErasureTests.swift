@testable import OptimizationServiceDelivery
import Foundation
import JavaScriptHost
import Logging
import MetricsTestKit
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import OptimizationTesting
import Testing

/// Erasure across the replicas of a shared outbox: `eraseProfile` on one replica reaches the
/// events another replica claimed into its memory before it, through the store's erasure log,
/// within one poll interval.
@Suite("OptimizationService: erasure across replicas of a shared outbox")
struct ServiceSharedOutboxErasureTests {
    typealias Helpers = ServiceSharedOutboxTests

    /// Two started replicas on `outbox` that send to `server`; "b" on `clockB`, with `metricsB`
    /// and `logsB`.
    /// Every failed flush waits exactly 100 ms (no request leaves before).
    static let retryAfter100Milliseconds = QueuePolicy(flush: QueueFlushPolicy(
        baseBackoff: .milliseconds(100), maxBackoff: .milliseconds(100), jitterRatio: 0))

    static func replicas(
        _ server: LocalOptimizationAPIServer, outbox: InMemorySharedOutbox, clock: ManualClock, clockB: ManualClock? = nil,
        metricsB: TestMetrics = TestMetrics(), logsB: LogRecorder = LogRecorder()
    ) async throws -> (a: OptimizationService, b: OptimizationService) {
        func replica(_ name: String, clock: ManualClock, environment: OptimizationService.Environment) -> OptimizationService {
            OptimizationService(
                config: OptimizationConfig(
                    clientId: "org-1",
                    api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL),
                    queuePolicy: Self.retryAfter100Milliseconds),
                options: .init(
                    engines: 1, deliveryShards: 1, shutdownFlushTimeout: .seconds(30),
                    sharedOutbox: SharedOutbox(
                        store: outbox.store(replica: name), pollInterval: .seconds(1), leaseRenewalInterval: .seconds(5),
                        retryAfterFailure: .seconds(5))),
                environment: environment)
        }
        var logger = logsB.logger
        logger.logLevel = .trace
        let a = replica("a", clock: clock, environment: .init(clock: clock))
        let b = replica("b", clock: clockB ?? clock, environment: .init(logger: logger, clock: clockB ?? clock, metricsFactory: metricsB))
        try await a.start()
        try await b.start()
        return (a, b)
    }

    /// Replica `b` stores and claims three clicks of "erased" and three of "kept" and fails to send
    /// them (the Insights API answers 503 until the script is cleared).
    static func holdUndelivered(_ b: OptimizationService, server: LocalOptimizationAPIServer, outbox: InMemorySharedOutbox) async throws {
        server.enqueue(contentsOf: Array(repeating: .status(503), count: 50), for: .insights)
        try await Helpers.click(b, 0..<6) { $0 % 2 == 0 ? "erased" : "kept" }
        await b.flush()
        #expect(server.requests(matching: .insights).count >= 1, "B tried to send them")
        #expect(Helpers.deliveredEvents(server).isEmpty)
        #expect(outbox.rows.count == 6 && outbox.rows.allSatisfy { $0.owner == "b" }, "B holds every event")
        #expect(b.queuedEventCount == 6)
    }

    @Test func anErasureOnOneReplicaDropsTheEventsAnotherClaimedWithinOnePollInterval() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let outbox = InMemorySharedOutbox(clock: clock)
            let (metricsB, logsB) = (TestMetrics(), LogRecorder())
            let (a, b) = try await Self.replicas(server, outbox: outbox, clock: clock, metricsB: metricsB, logsB: logsB)
            try await Self.holdUndelivered(b, server: server, outbox: outbox)

            #expect(try await a.eraseProfile("erased") == 3, "A deleted them from the store")
            #expect(outbox.erasureLog.map(\.profileId) == ["erased"])
            clock.advance(by: .seconds(1))   // one poll interval: B reads the erasure log
            await b.flush()                  // still failing: nothing may go out yet anyway
            #expect(b.queuedEventCount == 3, "B dropped the erased profile's events from memory")
            #expect(try metricsB.expectCounter("optimization_shared_outbox_erased_events_total").totalValue == 3)
            #expect(logsB.all.contains { $0.level == .info && $0.metadata["events"] == "3" }, "reported")
            #expect(logsB.all.contains { $0.level == .debug && $0.metadata["profileId"] == "erased" }, "the profile at debug")
            #expect(!logsB.all.contains { record in record.level > .debug && record.metadata.values.contains { "\($0)" == "erased" } },
                    "no profile id above debug")
            server.clearScript()             // the API recovers
            clock.advance(by: .milliseconds(100))  // the backoff has passed
            await b.flush()
            let delivered = Helpers.deliveredEvents(server)
            #expect(delivered.map(\.profile) == ["kept", "kept", "kept"], "none of the erased profile's events is sent")
            #expect(outbox.rows.isEmpty)
            await b.shutdown()
            await a.shutdown()
            #expect(Helpers.deliveredEvents(server).allSatisfy { $0.profile == "kept" }, "nor at shutdown")
        }
    }

    @Test func aReplicaThatFellBehindTheLogsRetentionChecksWhichOfItsEventsAreStillStored() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let clockB = ManualClock()   // B's poll timer stands still while the log is pruned
            let outbox = InMemorySharedOutbox(clock: clock, erasureRetention: .seconds(2))
            let (a, b) = try await Self.replicas(server, outbox: outbox, clock: clock, clockB: clockB)
            try await Self.holdUndelivered(b, server: server, outbox: outbox)

            #expect(try await a.eraseProfile("erased") == 3)
            clock.advance(by: .seconds(3))
            #expect(try await a.eraseProfile("someone-else") == 0)   // prunes the first entry
            #expect(outbox.erasureLog.map(\.profileId) == ["someone-else"], "the log no longer names the erased profile")
            clockB.advance(by: .seconds(1))
            await b.flush()
            #expect(b.queuedEventCount == 3, "B found its claimed events of that profile gone from the store and dropped it")
            server.clearScript()
            clockB.advance(by: .milliseconds(100))  // the backoff has passed
            await b.flush()
            #expect(Helpers.deliveredEvents(server).map(\.profile) == ["kept", "kept", "kept"])
            await b.shutdown()
            await a.shutdown()
        }
    }

    @Test func eventsStoredAfterTheErasureAreDeliveredEvenWhenAReplicaDroppedThemFromMemory() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let outbox = InMemorySharedOutbox(clock: clock)
            let (a, b) = try await Self.replicas(server, outbox: outbox, clock: clock)
            try await Self.holdUndelivered(b, server: server, outbox: outbox)
            #expect(try await a.eraseProfile("erased") == 3)
            await a.shutdown()               // so only B may claim what it gives back
            // The visitor comes back before B read the log: B stores and claims a new event.
            try await Helpers.click(b, 6..<7) { _ in "erased" }
            await b.flush()
            #expect(outbox.rows.contains { $0.record.profileId == "erased" && $0.owner == "b" })
            clock.advance(by: .seconds(1))   // B reads the log: drops the profile, gives the new event back
            await b.flush()                  // a retry that started before B read the log fails (503)
            server.clearScript()
            clock.advance(by: .milliseconds(100))  // the backoff has passed
            await b.flush()                  // claims it again and sends it
            let delivered = Helpers.deliveredEvents(server)
            #expect(delivered.filter { $0.profile == "erased" }.map(\.componentId) == ["c6"], "only the event stored after the erasure")
            #expect(delivered.filter { $0.profile == "kept" }.count == 3)
            #expect(outbox.rows.isEmpty)
            await b.shutdown()
        }
    }
}
