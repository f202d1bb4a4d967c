import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import OptimizationTesting
import Testing

/// The service's durable outbox: accepted Insights events survive a restart through the durable
/// outbox, keep their messageId and consent flag, are erased per profile, and are not sent again
/// once delivered.
@Suite("OptimizationService with a durable outbox")
struct ServiceOutboxTests {
    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("service-outbox-\(UUID().uuidString)")
    }

    /// A service whose Insights API refuses every connection (nothing listens on port 1).
    static func unreachableService(outbox directory: URL) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                clientId: "org-1",
                api: OptimizationAPIConfig(experienceBaseURL: "http://127.0.0.1:1/experience/", insightsBaseURL: "http://127.0.0.1:1/insights/")),
            options: .init(engines: 1, shutdownFlushTimeout: .seconds(30), outboxDirectory: directory),
            environment: .init(clock: ManualClock()))
    }

    static func service(_ server: LocalOptimizationAPIServer, outbox directory: URL) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                clientId: "org-1", api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)),
            options: .init(engines: 1, outboxDirectory: directory), environment: .init(clock: ManualClock()))
    }

    @Test func eventsAcceptedWhileTheAPIIsDownAreDeliveredAfterARestart() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var accepted: [String: [String]] = [:]
        let down = Self.unreachableService(outbox: directory)
        try await down.start()
        for index in 0..<30 {
            let profile = "visitor-\(index % 3)"
            let request = down.forRequest(RequestOptions(consent: true, profileId: profile))
            #expect(try await request.trackClick(TrackClickPayload(componentId: "c\(index)")).accepted)
            accepted[profile, default: []].append("c\(index)")
        }
        await down.shutdown()  // the final flush fails: everything stays on disk

        try await LocalOptimizationAPIServer.withRunning { server in
            let up = Self.service(server, outbox: directory)
            try await up.start()
            #expect(up.queuedEventCount == 30, "recovered before any new event")
            await up.flush()
            let events = server.insightsBatches.flatMap { batch in
                (batch["events"]?.arrayValue ?? []).map { (batch["profile"]?["id"]?.stringValue ?? "?", $0) }
            }
            #expect(events.count == 30)
            for (profile, components) in accepted {
                let delivered = events.filter { $0.0 == profile }.compactMap { $0.1["componentId"]?.stringValue }
                #expect(delivered == components, "\(profile): every accepted event, in order")
            }
            #expect(Set(events.compactMap { $0.1["messageId"]?.stringValue }).count == 30, "original message ids, once each")
            #expect(events.allSatisfy { $0.1["context"]?["gdpr"]?["isConsentGiven"] == true })
            await up.shutdown()

            // Delivered events are acknowledged: a third start recovers nothing.
            let again = Self.service(server, outbox: directory)
            try await again.start()
            #expect(again.queuedEventCount == 0)
            await again.shutdown()
        }
    }

    @Test func oneProcessPerDirectoryAndErasureRemovesAProfileFromDisk() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = Self.unreachableService(outbox: directory)
        try await first.start()
        let second = Self.unreachableService(outbox: directory)
        let error = await caughtError { try await second.start() }
        guard case .configError(let message) = error as? OptimizationError else {
            Issue.record("expected a configError, got \(String(describing: error))")
            return
        }
        #expect(message.contains("already open in this process"), "\(message)")

        for profile in ["alice", "bob", "alice"] {
            try await first.forRequest(RequestOptions(consent: true, profileId: profile)).trackClick(TrackClickPayload(componentId: profile))
        }
        #expect(try await first.eraseProfile("alice") == 2)
        #expect(first.queuedEventCount == 1)
        await first.shutdown()

        try await LocalOptimizationAPIServer.withRunning { server in
            let up = Self.service(server, outbox: directory)
            try await up.start()
            await up.flush()
            #expect(server.insightsBatches.compactMap { $0["profile"]?["id"]?.stringValue } == ["bob"])
            await up.shutdown()
        }
    }

    @Test func eventsTheOutboxExpiresLeaveTheQueueAndAreReported() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        let service = OptimizationService(
            config: OptimizationConfig(
                clientId: "org-1",
                api: OptimizationAPIConfig(experienceBaseURL: "http://127.0.0.1:1/experience/", insightsBaseURL: "http://127.0.0.1:1/insights/")),
            options: .init(engines: 1, outboxDirectory: directory, outbox: OutboxConfiguration(timeToLive: .milliseconds(60_000))),
            environment: .init(clock: clock))
        try await service.start()
        var reports = service.queueProbe()
        try await service.forRequest(RequestOptions(consent: true, profileId: "visitor")).trackClick(TrackClickPayload(componentId: "old"))
        clock.advance(by: .milliseconds(30_000))
        try await service.forRequest(RequestOptions(consent: true, profileId: "visitor")).trackClick(TrackClickPayload(componentId: "newer"))
        clock.advance(by: .milliseconds(30_000))  // the first event is now 60 s old
        // The outbox's drop reaches the queue on another thread; the queue removes the event, then
        // reports it (after its lock), so the report may follow the removal a little.
        try await eventually("the expired event leaves the queue") { service.queuedEventCount == 1 }
        // Flush failures of the unreachable API may come first.
        let expired = try #require(await reports.first { $0.type == .offlineDrop }, "no offlineDrop report")
        #expect(expired.context["reason"] == "expired" && expired.context["droppedCount"] == 1)
        #expect(expired.context["droppedEvents"]?[0]?["componentId"] == "old")
        await service.shutdown()
    }
}

/// The outbox governs the service's backlog: the Insights queue holds a window of it, nothing is
/// dropped for room, an event the outbox cannot store fails its call, and what the outbox's own
/// bounds drop is acknowledged (never sent again after a restart).
@Suite("OptimizationService backlog window")
struct ServiceBacklogWindowTests {
    static func service(
        _ server: LocalOptimizationAPIServer?, outbox directory: URL, window: Int, configuration: OutboxConfiguration = .init(),
        clock: ManualClock = ManualClock()
    ) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                clientId: "org-1", api: OptimizationAPIConfig(
                    experienceBaseURL: server?.experienceBaseURL ?? "http://127.0.0.1:1/experience/",
                    insightsBaseURL: server?.insightsBaseURL ?? "http://127.0.0.1:1/insights/")),
            options: .init(engines: 1, insightsMaxEvents: window, shutdownFlushTimeout: .seconds(30), outboxDirectory: directory, outbox: configuration),
            environment: .init(clock: clock))
    }

    static func deliveredComponents(_ server: LocalOptimizationAPIServer) -> [String] {
        server.insightsBatches.flatMap { ($0["events"]?.arrayValue ?? []).compactMap { $0["componentId"]?.stringValue } }
    }

    @Test func aWindowOfFiveKeepsTwentyEventsAndDeliversEachOnceAfterARestart() async throws {
        let directory = ServiceOutboxTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let down = Self.service(nil, outbox: directory, window: 5)
        try await down.start()
        let request = down.forRequest(RequestOptions(consent: true, profileId: "visitor"))
        for index in 0..<20 { #expect(try await request.trackClick(TrackClickPayload(componentId: "c\(index)")).accepted) }
        #expect(down.queuedEventCount == 5, "memory holds the window")
        await down.shutdown()

        try await LocalOptimizationAPIServer.withRunning { server in
            let up = Self.service(server, outbox: directory, window: 5)
            try await up.start()
            for _ in 0..<10 where Self.deliveredComponents(server).count < 20 { await up.flush() }
            #expect(Self.deliveredComponents(server) == (0..<20).map { "c\($0)" }, "every event, in order, once")
            await up.shutdown()
        }
        let again = Self.service(nil, outbox: directory, window: 5)
        try await again.start()
        #expect(again.queuedEventCount == 0, "nothing comes back")
        await again.shutdown()
    }

    @Test func anErasedProfileIsNotRefilledFromDiskIntoTheWindow() async throws {
        let directory = ServiceOutboxTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await LocalOptimizationAPIServer.withRunning { server in
            server.enqueue(contentsOf: Array(repeating: .status(503), count: 100), for: .insights)
            let clock = ManualClock()
            let service = Self.service(server, outbox: directory, window: 40, clock: clock)
            try await service.start()
            let erased = service.forRequest(RequestOptions(consent: true, profileId: "erased"))
            for index in 0..<150 { #expect(try await erased.trackClick(TrackClickPayload(componentId: "e\(index)")).accepted) }
            let kept = service.forRequest(RequestOptions(consent: true, profileId: "kept"))
            for index in 0..<5 { #expect(try await kept.trackClick(TrackClickPayload(componentId: "k\(index)")).accepted) }
            // No Insights request in flight (one may finish after the erasure: that is allowed).
            await service.flush()
            #expect(try await service.eraseProfile("erased") == 150)
            server.clearScript()  // the API is back
            clock.advance(by: DeliveryPolicy.standard.maxBackoff * 2)  // past any backoff wait
            for _ in 0..<10 { await service.flush() }
            await service.shutdown()
            let delivered = Self.deliveredComponents(server)
            #expect(delivered.filter { $0.hasPrefix("e") }.isEmpty, "no event of the erased profile leaves")
            #expect(delivered.filter { $0.hasPrefix("k") } == (0..<5).map { "k\($0)" })
        }
    }

    @Test func eventsTheOutboxBoundsDropAreAcknowledgedAndNeverSentAfterARestart() async throws {
        let directory = ServiceOutboxTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bounds = OutboxConfiguration(maxEvents: 8)
        let down = Self.service(nil, outbox: directory, window: 100, configuration: bounds)
        try await down.start()
        let drops = down.queueEvents
        let request = down.forRequest(RequestOptions(consent: true, profileId: "visitor"))
        for index in 0..<20 { #expect(try await request.trackClick(TrackClickPayload(componentId: "c\(index)")).accepted) }
        var dropped: [String] = []
        for await report in drops where report.type == .offlineDrop {
            dropped += (report.context["droppedEvents"]?.arrayValue ?? []).compactMap { $0["componentId"]?.stringValue }
            if dropped.count >= 12 { break }
        }
        #expect(dropped == (0..<12).map { "c\($0)" }, "the oldest, reported")
        #expect(down.queuedEventCount == 8)
        await down.shutdown()

        try await LocalOptimizationAPIServer.withRunning { server in
            let up = Self.service(server, outbox: directory, window: 100, configuration: bounds)
            try await up.start()
            await up.flush()
            #expect(Self.deliveredComponents(server) == (12..<20).map { "c\($0)" }, "no dropped event comes back")
            await up.shutdown()
        }
    }

    @Test func anEventTheOutboxCannotStoreFailsItsCallAndNothingIsQueued() async throws {
        let directory = ServiceOutboxTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let service = Self.service(nil, outbox: directory, window: 100, configuration: OutboxConfiguration(maxBytes: 1_200))
        try await service.start()
        let request = service.forRequest(RequestOptions(consent: true, profileId: "visitor"))
        #expect(try await request.trackClick(TrackClickPayload(componentId: "small")).accepted)
        let huge = String(repeating: "x", count: 4_000)
        do {
            _ = try await request.trackClick(TrackClickPayload(componentId: huge))
            Issue.record("a call whose event cannot be stored must fail")
        } catch {
            guard case .eventNotStored(.eventTooLarge) = error else {
                Issue.record("expected eventNotStored(eventTooLarge), got \(error)")
                return
            }
        }
        #expect(service.queuedEventCount == 1, "nothing queued for the failed call")
        await service.shutdown()
    }
}
