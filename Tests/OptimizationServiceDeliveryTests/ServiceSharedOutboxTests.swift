@testable import OptimizationServiceDelivery
import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import OptimizationTesting
import Testing

/// The service with an outbox shared by replicas (`Options.sharedOutbox`), over the test kit's
/// in-memory store: events are stored before the call returns and delivered through claims; a
/// replica's expired leases are taken over; while the store is away events are queued in memory;
/// erasure reaches the store. The PostgreSQL store is tested with real processes in the
/// OptimizationPostgres package.
@Suite("OptimizationService with a shared outbox")
struct ServiceSharedOutboxTests {
    static func service(
        insightsBaseURL: String, experienceBaseURL: String, store: some SharedOutboxStore, clock: ManualClock, shards: Int = 1
    ) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                clientId: "org-1", api: OptimizationAPIConfig(experienceBaseURL: experienceBaseURL, insightsBaseURL: insightsBaseURL)),
            options: .init(
                engines: 1, deliveryShards: shards, shutdownFlushTimeout: .seconds(30),
                sharedOutbox: SharedOutbox(store: store, pollInterval: .seconds(1), leaseRenewalInterval: .seconds(5), retryAfterFailure: .seconds(5))),
            environment: .init(clock: clock))
    }

    /// An API base URL nothing listens on (port 1): requests to it fail at once.
    static let unreachable = "http://127.0.0.1:1/"

    /// One consented `trackClick` of component `c<index>` per index, by visitor `profile(index)`.
    static func click(_ service: OptimizationService, _ indices: Range<Int>, profile: (Int) -> String) async throws {
        for index in indices {
            _ = try await service.forRequest(RequestOptions(consent: true, profileId: profile(index)))
                .trackClick(TrackClickPayload(componentId: "c\(index)"))
        }
    }

    /// Replica "a", started, that cannot reach the APIs, after it stored and claimed `count` clicks
    /// of one visitor (it holds them all, undelivered).
    static func replicaHoldingClicks(_ count: Int, outbox: InMemorySharedOutbox, clock: ManualClock) async throws -> OptimizationService {
        let replica = service(
            insightsBaseURL: unreachable + "insights/", experienceBaseURL: unreachable + "experience/",
            store: outbox.store(replica: "a"), clock: clock)
        try await replica.start()
        try await click(replica, 0..<count) { _ in "visitor" }
        await replica.flush()
        #expect(outbox.rows.count == count && outbox.rows.allSatisfy { $0.owner == "a" }, "A claimed every event it stored")
        return replica
    }

    static func deliveredEvents(_ server: LocalOptimizationAPIServer) -> [(profile: String, componentId: String, messageId: String)] {
        server.insightsBatches.flatMap { batch in
            (batch["events"]?.arrayValue ?? []).map {
                (batch["profile"]?["id"]?.stringValue ?? "?", $0["componentId"]?.stringValue ?? "?", $0["messageId"]?.stringValue ?? "?")
            }
        }
    }

    @Test func everyEventIsStoredBeforeItsCallReturnsThenDeliveredInOrderAndDeleted() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let outbox = InMemorySharedOutbox(clock: clock)
            let service = Self.service(
                insightsBaseURL: server.insightsBaseURL, experienceBaseURL: server.experienceBaseURL, store: outbox.store(replica: "a"),
                clock: clock, shards: 2)
            try await service.start()
            var accepted: [String: [String]] = [:]
            for index in 0..<12 {
                let profile = "visitor-\(index % 3)"
                let result = try await service.forRequest(RequestOptions(consent: true, profileId: profile))
                    .trackClick(TrackClickPayload(componentId: "c\(index)"))
                #expect(result.accepted)
                #expect(outbox.rows.count == index + 1, "stored before the call returned")
                accepted[profile, default: []].append("c\(index)")
            }
            #expect(outbox.rows.allSatisfy { $0.record.consent && $0.record.profileId?.hasPrefix("visitor-") == true })
            await service.flush()
            let delivered = Self.deliveredEvents(server)
            #expect(delivered.count == 12)
            for (profile, components) in accepted {
                #expect(delivered.filter { $0.profile == profile }.map(\.componentId) == components, "\(profile): in order")
            }
            #expect(Set(delivered.map(\.messageId)) == Set(outbox.appendedMessageIds), "the stored events were the ones sent")
            #expect(outbox.rows.isEmpty, "delivered events are deleted from the store")
            await service.shutdown()
        }
    }

    @Test func anotherReplicaTakesOverTheEventsOfAReplicaWhoseLeasesExpired() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let storeClock = ManualClock()
            let outbox = InMemorySharedOutbox(clock: storeClock, leaseDuration: .seconds(30))
            // Replica A cannot reach the Insights API and its clock stands still: it claims the
            // events, fails to send them and never renews their leases (as if it had died).
            let replicaA = Self.service(
                insightsBaseURL: Self.unreachable + "insights/", experienceBaseURL: server.experienceBaseURL,
                store: outbox.store(replica: "a"), clock: ManualClock())
            try await replicaA.start()
            try await Self.click(replicaA, 0..<9) { "visitor-\($0 % 2)" }
            await replicaA.flush()
            #expect(outbox.rows.count == 9)
            #expect(outbox.rows.allSatisfy { $0.owner == "a" }, "A claimed every event it stored")

            let replicaB = Self.service(
                insightsBaseURL: server.insightsBaseURL, experienceBaseURL: server.experienceBaseURL, store: outbox.store(replica: "b"),
                clock: storeClock)
            try await replicaB.start()
            await replicaB.flush()
            #expect(Self.deliveredEvents(server).isEmpty, "nothing is taken over while A's leases are live")
            storeClock.advance(by: .seconds(31))
            await replicaB.flush()
            let delivered = Self.deliveredEvents(server)
            #expect(delivered.count == 9, "B delivered every event A left")
            for profile in ["visitor-0", "visitor-1"] {
                let components = delivered.filter { $0.profile == profile }.map(\.componentId)
                #expect(components == (0..<9).filter { "visitor-\($0 % 2)" == profile }.map { "c\($0)" }, "\(profile): in order")
            }
            #expect(outbox.rows.isEmpty)
            await replicaB.shutdown()
            await replicaA.shutdown()
        }
    }

    @Test func aLiveReplicaRenewsItsLeasesSoNoOtherReplicaTakesItsEventsOver() async throws {
        let clock = ManualClock()
        let outbox = InMemorySharedOutbox(clock: clock, leaseDuration: .seconds(30))
        // A cannot deliver but lives: its poll wakes renew its leases.
        let replicaA = try await Self.replicaHoldingClicks(3, outbox: outbox, clock: clock)
        for _ in 0..<20 {
            clock.advance(by: .seconds(6))   // past a renewal interval (5 s) each time
            await replicaA.flush()           // runs after the wake the advance caused
        }
        let store = outbox.store(replica: "b")
        #expect(try await store.claim(queue: .insights, limit: 10).isEmpty, "120 s later A's leases are live: nothing to take over")
        #expect(outbox.rows.count == 3 && outbox.rows.allSatisfy { $0.owner == "a" && $0.claims == 1 })
        await replicaA.shutdown()
    }

    @Test func aReplicaWhoseCredentialsAreRefusedGivesItsEventsBackAndClaimsNoMore() async throws {
        try await LocalOptimizationAPIServer.withRunning { refusing in
            try await LocalOptimizationAPIServer.withRunning { server in
                let clock = ManualClock()
                let outbox = InMemorySharedOutbox(clock: clock)
                refusing.enqueue(contentsOf: Array(repeating: .status(401, body: #"{"message":"Unauthorized"}"#), count: 9), for: .insights)
                let replicaA = Self.service(
                    insightsBaseURL: refusing.insightsBaseURL, experienceBaseURL: refusing.experienceBaseURL,
                    store: outbox.store(replica: "a"), clock: clock)
                try await replicaA.start()
                try await Self.click(replicaA, 0..<3) { "visitor-\($0 % 2)" }
                // The credential is refused three times in a row (the limit), the backoff between:
                // each time the two visitors' batch and then each visitor's half.
                await replicaA.flush()
                #expect(refusing.requests(matching: .insights).count == 3)
                #expect(outbox.rows.allSatisfy { $0.owner == "a" }, "one refusal does not give the events back")
                clock.advance(by: .seconds(1))
                await replicaA.flush()
                clock.advance(by: .seconds(2))
                await replicaA.flush()
                #expect(refusing.requests(matching: .insights).count == 9)
                #expect(outbox.rows.count == 3, "refused events are not deleted from the store")
                #expect(outbox.rows.allSatisfy { $0.owner == nil }, "they are given back")
                try await Self.click(replicaA, 3..<5) { "visitor-\($0 % 2)" }
                await replicaA.flush()
                #expect(outbox.rows.count == 5 && outbox.rows.allSatisfy { $0.owner == nil }, "A stores later events and claims none")
                #expect(refusing.requests(matching: .insights).count == 9, "nothing is sent after the refusal")

                let replicaB = Self.service(
                    insightsBaseURL: server.insightsBaseURL, experienceBaseURL: server.experienceBaseURL,
                    store: outbox.store(replica: "b"), clock: clock)
                try await replicaB.start()
                await replicaB.flush()
                let delivered = Self.deliveredEvents(server)
                for profile in ["visitor-0", "visitor-1"] {
                    #expect(delivered.filter { $0.profile == profile }.map(\.componentId)
                        == (0..<5).filter { "visitor-\($0 % 2)" == profile }.map { "c\($0)" }, "B delivered \(profile)'s events in order")
                }
                #expect(outbox.rows.isEmpty)
                await replicaB.shutdown()
                await replicaA.shutdown()
            }
        }
    }

    @Test func whileTheStoreIsAwayEventsAreQueuedInMemoryAndTheStoreIsRetriedLater() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let outbox = InMemorySharedOutbox(clock: clock)
            outbox.isAvailable = false
            let service = Self.service(
                insightsBaseURL: server.insightsBaseURL, experienceBaseURL: server.experienceBaseURL, store: outbox.store(replica: "a"),
                clock: clock)
            try await service.start()
            for index in 0..<3 {
                let result = try await service.forRequest(RequestOptions(consent: true, profileId: "visitor"))
                    .trackClick(TrackClickPayload(componentId: "away-\(index)"))
                #expect(result.accepted, "a call does not fail because the store is away")
            }
            #expect(service.queuedEventCount == 3, "kept in this replica's memory")
            outbox.isAvailable = true
            _ = try await service.forRequest(RequestOptions(consent: true, profileId: "visitor"))
                .trackClick(TrackClickPayload(componentId: "still-away"))
            #expect(outbox.rows.isEmpty, "within retryAfterFailure calls do not try the store again")
            #expect(service.queuedEventCount == 4)
            clock.advance(by: .seconds(6))
            _ = try await service.forRequest(RequestOptions(consent: true, profileId: "visitor"))
                .trackClick(TrackClickPayload(componentId: "back"))
            #expect(outbox.rows.count == 1, "after retryAfterFailure the store is used again")
            await service.flush()
            #expect(Self.deliveredEvents(server).map(\.componentId).sorted() == ["away-0", "away-1", "away-2", "back", "still-away"])
            #expect(outbox.rows.isEmpty)
            await service.shutdown()
        }
    }

    @Test func erasureDeletesAProfileFromTheStoreAndFromTheQueues() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let outbox = InMemorySharedOutbox(clock: clock)
            let service = Self.service(
                insightsBaseURL: server.insightsBaseURL, experienceBaseURL: server.experienceBaseURL, store: outbox.store(replica: "a"),
                clock: clock)
            try await service.start()
            try await Self.click(service, 0..<6) { $0 % 2 == 0 ? "alice" : "bob" }
            #expect(try await service.eraseProfile("alice") == 3)
            #expect(outbox.rows.allSatisfy { $0.record.profileId == "bob" })
            await service.flush()
            #expect(Self.deliveredEvents(server).map(\.profile) == ["bob", "bob", "bob"], "none of alice's events is sent")
            await service.shutdown()
        }
    }

    @Test func stoppingGivesTheClaimedUndeliveredEventsBack() async throws {
        let clock = ManualClock()
        let outbox = InMemorySharedOutbox(clock: clock)
        let service = try await Self.replicaHoldingClicks(4, outbox: outbox, clock: clock)
        await service.shutdown()
        #expect(outbox.rows.count == 4, "undelivered events stay stored")
        #expect(outbox.rows.allSatisfy { $0.owner == nil }, "and are claimable by another replica at once")
    }

    @Test func oneOutboxOnly() async throws {
        let service = OptimizationService(
            config: OptimizationConfig(clientId: "org-1"),
            options: .init(
                outboxDirectory: FileManager.default.temporaryDirectory,
                sharedOutbox: SharedOutbox(store: InMemorySharedOutbox(clock: ManualClock()).store(replica: "a"))))
        let error = await caughtError { try await service.start() }
        guard case .configError(let message) = error as? OptimizationError else {
            Issue.record("expected a configError, got \(String(describing: error))")
            return
        }
        #expect(message.contains("sharedOutbox"))
    }
}
