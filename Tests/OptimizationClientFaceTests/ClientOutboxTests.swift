import OptimizationDelivery
import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import OptimizationTesting
import Synchronization
import Testing

/// The single-visitor client's durable outbox: with a storage directory every accepted event is in
/// the durable outbox before the accepting call returns, survives a restart, is sent again with
/// its original bytes, is acknowledged once delivered, is purged by consent withdrawal, and the
/// outbox's own drops (time to live) leave the queues too.
@Suite("OptimizationClient with a durable outbox")
struct ClientOutboxTests {
    static let profile: JSONValue = ["id": "p-1", "stableId": "p-1", "random": 0.5, "audiences": [], "traits": [:], "location": [:]]

    /// A client on `directory` whose API is `server` (or, without one, nothing listening).
    static func client(
        _ directory: URL, server: LocalOptimizationAPIServer? = nil, clock: ManualClock = ManualClock(),
        online: Bool = true, outbox: OutboxConfiguration = OutboxConfiguration()
    ) throws -> OptimizationClient {
        let client = OptimizationClient(environment: .init(clock: clock, storage: .directory(directory), outbox: outbox))
        client.setOnline(online)
        try client.initialize(config: OptimizationConfig(
            clientId: "org-1", defaults: StorageDefaults(consent: true, profile: profile),
            api: OptimizationAPIConfig(
                experienceBaseURL: server?.experienceBaseURL ?? "http://127.0.0.1:1/experience/",
                insightsBaseURL: server?.insightsBaseURL ?? "http://127.0.0.1:1/insights/")))
        return client
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("client-outbox-\(UUID().uuidString)")
    }

    static func outboxFiles(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("outbox").path)) ?? []).sorted()
    }

    @Test func eventsAcceptedOfflineAreOnDiskBeforeTheCallReturnsAndAreDeliveredOnceAfterARestart() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let offline = try Self.client(directory, online: false)
        let events = offline.events
        var iterator = events.makeAsyncIterator()
        #expect(try await offline.track(event: "bought").accepted)
        #expect(offline.currentRuntime?.outbox?.outbox.count == 1, "on disk when track returned")
        #expect(try await offline.trackClick(TrackClickPayload(componentId: "hero")).accepted)
        #expect(try await offline.identify(userId: "u-1").accepted)
        #expect(offline.currentRuntime?.outbox?.outbox.count == 3)
        var emitted: [String] = []
        for _ in 0..<3 { emitted.append(try #require(await iterator.next()?["messageId"]?.stringValue)) }
        offline.destroy()  // the final flush cannot run offline: all three stay on disk

        try await LocalOptimizationAPIServer.withRunning { server in
            let online = try Self.client(directory, server: server)
            defer { online.destroy() }
            try await online.flush()
            let experience = server.requests(matching: .experience).flatMap(\.deliveredEvents)
            let insights = server.requests(matching: .insights).flatMap(\.deliveredEvents)
            #expect(experience.compactMap { $0["messageId"]?.stringValue } == [emitted[0], emitted[2]], "original ids, in order")
            #expect(experience.first?["event"] == "bought")
            #expect(insights.compactMap { $0["messageId"]?.stringValue } == [emitted[1]])
            #expect(insights.first?["componentId"] == "hero")
            #expect(server.insightsBatches.first?["profile"]?["id"] == "p-1", "sent for the profile it was accepted for")
            #expect(online.currentRuntime?.outbox?.outbox.count == 0, "acknowledged once delivered")
        }

        // Delivered events never come back.
        let third = try Self.client(directory, online: false)
        defer { third.destroy() }
        #expect(third.currentRuntime?.outbox?.outbox.recovery.records.isEmpty == true)
        #expect(third.queueSizes().map { [$0.experience, $0.insights] } == [0, 0])
    }

    @Test func retriesKeepEventsOnDiskAndRefusedBatchesAreAcknowledged() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await LocalOptimizationAPIServer.withRunning { server in
            server.enqueue(.status(503), for: .experience)
            let client = try Self.client(directory, server: server)
            defer { client.destroy() }
            #expect(try await client.track(event: "kept").accepted)
            #expect(client.currentRuntime?.outbox?.outbox.count == 1, "a 503 acknowledges nothing")
            server.enqueue(.status(422), for: .experience)
            client.setOnline(false)
            client.setOnline(true)  // reconnect: force-flush, refused for good
            try await server.waitForRequests(count: 2, matching: .experience)
            try await client.flush()
            #expect(client.currentRuntime?.outbox?.outbox.count == 0, "a refused batch is not recovered again")
        }
    }

    @Test func consentWithdrawalDeletesTheOutboxInTheSameCall() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = try Self.client(directory, online: false)
        defer { client.destroy() }
        #expect(try await client.track(event: "a").accepted)
        #expect(try await client.trackClick(TrackClickPayload(componentId: "b")).accepted)
        #expect(Self.outboxFiles(directory).contains { $0.hasSuffix(".log") })
        client.consent(false)
        #expect(client.currentRuntime?.outbox?.outbox.count == 0)
        #expect(Self.outboxFiles(directory) == [DurableOutbox.lockFileName], "no event file left on disk")
        #expect(try await client.track(event: "blocked").accepted == false)
        #expect(client.currentRuntime?.outbox?.outbox.count == 0, "a blocked event is never written")
    }

    @Test func aSecondClientOnTheSameDirectoryGetsAClearError() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try Self.client(directory, online: false)
        defer { first.destroy() }
        let second = OptimizationClient(environment: .init(clock: ManualClock(), storage: .directory(directory)))
        #expect {
            try second.initialize(config: OptimizationConfig(clientId: "org-1"))
        } throws: { error in
            guard case .configError(let message) = error as? OptimizationError else { return false }
            return message.contains("already open in this process")
        }
        #expect(!second.isInitialized)
        first.destroy()
        try second.initialize(config: OptimizationConfig(clientId: "org-1"))  // released by destroy()
        second.destroy()
    }

    @Test func expiredEventsLeaveTheQueueAndAreReportedAsOfflineDrops() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        let client = try Self.client(directory, clock: clock, online: false, outbox: OutboxConfiguration(timeToLive: .milliseconds(60_000)))
        defer { client.destroy() }
        var reports = client.queueProbe()
        #expect(try await client.track(event: "old").accepted)
        clock.advance(by: .milliseconds(30_000))
        #expect(try await client.trackClick(TrackClickPayload(componentId: "newer")).accepted)
        clock.advance(by: .milliseconds(30_000))  // the first event is now 60 s old
        // The outbox's drop reaches the queue on another thread; the queue removes the event, then
        // reports it (after its lock), so the report may follow the removal a little.
        try await eventually("the expired event leaves the queue") {
            client.queueSizes().map { [$0.experience, $0.insights] } == [0, 1]
        }
        let drop = try #require(await reports.first { $0.type == .offlineDrop }, "no offlineDrop report")
        #expect(drop.queue == .experience)
        #expect(drop.context["reason"] == "expired")
        #expect(drop.context["droppedCount"] == 1)
        #expect(client.currentRuntime?.outbox?.outbox.count == 1)
    }

    @Test func storageDisabledOrCustomKeepsNoOutbox() throws {
        let client = OptimizationClient(environment: .init(clock: ManualClock(), storage: .disabled))
        try client.initialize(config: OptimizationConfig(clientId: "org-1"))
        defer { client.destroy() }
        #expect(client.currentRuntime?.outbox == nil)
    }
}

/// The outbox governs the backlog: the queues hold a window of it in memory and load the rest as
/// the window drains, so a restart delivers everything on disk, whatever the window size.
@Suite("OptimizationClient backlog window")
struct ClientBacklogWindowTests {
    static func storedTrack(_ index: Int) -> OutboxEvent {
        let payload = #"{"type":"track","event":"e\#(index)","messageId":"m-\#(index)","channel":"server","#
            + #""context":{"gdpr":{"isConsentGiven":true}},"timestamp":"2026-01-01T00:00:00.000Z"}"#
        return OutboxEvent(queue: .experience, messageId: "m-\(index)", profileId: nil, consent: true, acceptedAt: nil, payload: Array(payload.utf8))
    }

    @Test func aRestartWith5000StoredExperienceEventsAndAWindowOf100DeliversAll() async throws {
        let directory = ClientOutboxTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        do {
            let outbox = try DurableOutbox(directory: directory.appendingPathComponent("outbox"), clock: clock, logger: .init(label: "test"))
            try outbox.append(contentsOf: (0..<5_000).map(Self.storedTrack))
            outbox.close()
        }
        try await LocalOptimizationAPIServer.withRunning { server in
            let client = try ClientOutboxTests.client(directory, server: server, clock: clock)
            defer { client.destroy() }
            #expect(client.queueSizes()?.experience ?? 0 <= 100, "memory holds a window, not the backlog")
            try await client.flush()
            let delivered = server.requests(matching: .experience).flatMap(\.deliveredEvents).compactMap { $0["event"]?.stringValue }
            #expect(delivered.count == 5_000)
            #expect(delivered == (0..<5_000).map { "e\($0)" }, "in order")
            #expect(server.requests(matching: .experience).allSatisfy { $0.deliveredEvents.count <= 100 })
            #expect(client.currentRuntime?.outbox?.outbox.count == 0, "all acknowledged")
        }
    }

    @Test func eventsAcceptedBeyondTheWindowWaitOnDiskAndNothingIsDropped() async throws {
        let directory = ClientOutboxTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let offline = try ClientOutboxTests.client(directory, online: false)
        for index in 0..<250 { #expect(try await offline.track(event: "t\(index)").accepted) }
        #expect(offline.queueSizes()?.experience == 100, "the window")
        #expect(offline.currentRuntime?.outbox?.outbox.count == 250, "everything on disk")
        offline.destroy()
        try await LocalOptimizationAPIServer.withRunning { server in
            let client = try ClientOutboxTests.client(directory, server: server)
            defer { client.destroy() }
            #expect(try await client.track(event: "after").accepted)
            try await client.flush()
            let delivered = server.requests(matching: .experience).flatMap(\.deliveredEvents).compactMap { $0["event"]?.stringValue }
            #expect(delivered == (0..<250).map { "t\($0)" } + ["after"])
            #expect(client.currentRuntime?.outbox?.outbox.count == 0)
        }
    }
}

@Suite("OptimizationClient events the outbox cannot store")
struct ClientAppendFailureTests {
    @Test func aCallWhoseEventCannotBeStoredFailsAndNothingIsQueuedPublishedOrAcknowledged() async throws {
        let directory = ClientOutboxTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = try ClientOutboxTests.client(directory, online: false, outbox: OutboxConfiguration(maxBytes: 1_500))
        defer { client.destroy() }
        let events = client.events
        var iterator = events.makeAsyncIterator()
        let huge = String(repeating: "x", count: 4_000)
        do {
            _ = try await client.track(event: "big", properties: ["blob": .string(huge)])
            Issue.record("a call whose event cannot be stored must fail")
        } catch {
            guard case .eventNotStored(.eventTooLarge) = error else {
                Issue.record("expected eventNotStored(eventTooLarge), got \(error)")
                return
            }
        }
        #expect(client.queueSizes()?.experience == 0, "not queued")
        #expect(client.currentRuntime?.outbox?.outbox.count == 0, "not stored")
        #expect(try await client.track(event: "small").accepted, "the next event is unaffected")
        #expect(await iterator.next()?["event"]?.stringValue == "small", "the refused event was never published")
    }
}

/// The real file system, except that writes to segment files fail with ENOSPC while `isFull`.
final class FullDiskFileSystem: OutboxFileSystem {
    private let real = PosixOutboxFileSystem()
    private let full = Mutex(false)

    var isFull: Bool {
        get { full.withLock { $0 } }
        set { full.withLock { $0 = newValue } }
    }

    func makePrivateDirectory(_ path: String) throws(OutboxError) { try real.makePrivateDirectory(path) }
    func lockFile(_ path: String, directory: String) throws(OutboxError) -> Int32 { try real.lockFile(path, directory: directory) }
    func unlockFile(_ handle: Int32) { real.unlockFile(handle) }
    func createForAppend(_ path: String, header: [UInt8]) throws(OutboxError) -> Int32 {
        if isFull { throw .ioFailure(path: path, operation: "create", errno: ENOSPC) }
        return try real.createForAppend(path, header: header)
    }
    func openForAppend(_ path: String) throws(OutboxError) -> Int32 { try real.openForAppend(path) }
    func writeOnce(_ bytes: UnsafeRawBufferPointer, to handle: Int32, path: String) throws(OutboxError) -> Int {
        if isFull, path.hasSuffix(".log") { throw .ioFailure(path: path, operation: "write", errno: ENOSPC) }
        return try real.writeOnce(bytes, to: handle, path: path)
    }
    func sync(_ handle: Int32, path: String) throws(OutboxError) { try real.sync(handle, path: path) }
    func syncDirectory(_ path: String) throws(OutboxError) { try real.syncDirectory(path) }
    func truncate(_ handle: Int32, to length: Int) -> Bool { real.truncate(handle, to: length) }
    func readAll(_ path: String) throws(OutboxError) -> [UInt8] { try real.readAll(path) }
    func replace(_ path: String, with bytes: [UInt8]) throws(OutboxError) { try real.replace(path, with: bytes) }
    func remove(_ path: String) throws(OutboxError) { try real.remove(path) }
    func list(_ directory: String) throws(OutboxError) -> [String] { try real.list(directory) }
    func size(_ handle: Int32) -> Int { real.size(handle) }
    func duplicate(_ handle: Int32) -> Int32? { real.duplicate(handle) }
    func close(_ handle: Int32) { real.close(handle) }
}

@Suite("OptimizationClient on a full disk")
struct ClientFullDiskTests {
    @Test func aFullDiskFailsTheCallAndNothingIsQueuedOrAcknowledged() async throws {
        let directory = ClientOutboxTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let disk = FullDiskFileSystem()
        var environment = OptimizationClient.Environment(clock: ManualClock(), storage: .directory(directory))
        environment.outboxFileSystem = disk
        let client = OptimizationClient(environment: environment)
        client.setOnline(false)
        try client.initialize(config: OptimizationConfig(
            clientId: "org-1", defaults: StorageDefaults(consent: true),
            api: OptimizationAPIConfig(experienceBaseURL: "http://127.0.0.1:1/experience/", insightsBaseURL: "http://127.0.0.1:1/insights/")))
        defer { client.destroy() }
        #expect(try await client.track(event: "before").accepted)
        disk.isFull = true
        do {
            _ = try await client.track(event: "on-a-full-disk")
            Issue.record("the call must fail while the disk is full")
        } catch {
            guard case .eventNotStored(.ioFailure(_, "write", ENOSPC)) = error else {
                Issue.record("expected eventNotStored(ioFailure write ENOSPC), got \(error)")
                return
            }
        }
        #expect(client.queueSizes()?.experience == 1, "only the first event is queued")
        #expect(client.currentRuntime?.outbox?.outbox.pendingRecords().map(\.queue) == [.experience], "the first stays stored: nothing acknowledged")
        disk.isFull = false
        #expect(try await client.track(event: "after").accepted, "storing works again once there is room")
        #expect(client.currentRuntime?.outbox?.outbox.count == 2)
    }
}
