import OptimizationDelivery
import Foundation
import JavaScriptHost
import Logging
import Testing
import OptimizationTestSupport

/// The Insights queue over a real ``DurableOutbox`` in a temporary directory: stored before
/// accepted, a window over the backlog, acknowledged when it leaves, erased from disk first.
@Suite("Insights queue with a durable outbox", .hangBound)
struct DurableInsightsTests {
    static func outbox(_ directory: URL, clock: ManualClock) throws -> DurableOutbox {
        try DurableOutbox(directory: directory, clock: clock, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    @Test func everyEventIsStoredBeforeItIsAcceptedAndAcknowledgedWhenDelivered() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        let outbox = try Self.outbox(directory, clock: clock)
        let transport = ScriptedTransport()
        let queue = makeQueue(transport: transport, clock: clock, policy: .with { $0.insightsMaxEvents = 10 }, outbox: outbox)
        try queue.enqueue(events(25))
        #expect(outbox.count == 25, "stored before enqueue returned")
        #expect(queue.count == 10, "a window of 10 in memory; the rest waits on disk")
        await queue.flush()
        #expect(transport.requests.map(messageIds) == [
            (0..<10).map { "p1-e\($0)" }, (10..<20).map { "p1-e\($0)" }, (20..<25).map { "p1-e\($0)" },
        ], "in order, the window refilled from disk as it drains")
        #expect(outbox.count == 0)
        outbox.close()
    }

    @Test func aRestartResumesTheStoredBacklogHeldEventsIncluded() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        let transport = ScriptedTransport()
        do {
            let outbox = try Self.outbox(directory, clock: clock)
            let queue = makeQueue(transport: transport, clock: clock, outbox: outbox)
            try queue.enqueueForVisitor(messageId: "held", consent: true, eventJSON: #"{"messageId":"held"}"#)
            try queue.enqueue(events(2))
            queue.close()
            outbox.close()
        }
        let outbox = try Self.outbox(directory, clock: clock)
        let queue = makeQueue(transport: transport, clock: clock, outbox: outbox)
        #expect(queue.resume() == 3)
        await queue.flush()
        #expect(transport.requests.map(messageIds) == [["p1-e0", "p1-e1"]], "the held event waits for a profile")
        queue.visitorProfileChanged(("v", #"{"id":"v"}"#))
        await queue.flush()
        #expect(transport.requests.last.map(messageIds) == ["held"])
        #expect(outbox.count == 0)
        outbox.close()
    }

    @Test func anErasedProfileIsNotRefilledFromDiskAndNeverSent() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        let outbox = try Self.outbox(directory, clock: clock)
        let transport = ScriptedTransport()
        let queue = makeQueue(transport: transport, clock: clock, policy: .with { $0.insightsMaxEvents = 40 }, outbox: outbox)
        transport.script(.status(503))
        try queue.enqueue(events(150, profile: "erased"))
        try queue.enqueue(events(5, profile: "kept"))
        await transport.waitForRequests(1)
        await queue.flush()
        #expect(try queue.eraseProfile("erased") == 150)
        clock.advance(by: .seconds(60))
        await queue.flush()
        let sent = transport.requests.dropFirst().flatMap(messageIds)
        #expect(sent == (0..<5).map { "kept-e\($0)" })
        #expect(outbox.count == 0)
        outbox.close()
    }

    @Test func aFailedStoreFailsTheCallAndQueuesNothingOfThatEvent() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        let outbox = try DurableOutbox(
            directory: directory, configuration: OutboxConfiguration(maxBytes: 4_096), clock: clock,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let queue = makeQueue(transport: ScriptedTransport(), clock: clock, outbox: outbox)
        var huge = events(1, from: 7)[0]
        huge.eventJSON = #"{"messageId":"p1-e7","pad":""# + String(repeating: "x", count: 8_000) + #""}"#
        #expect(throws: DeliveryQueueError.self) { try queue.enqueue(events(1) + [huge] + events(1, from: 2)) }
        #expect(queue.count == 1, "the event before it stays accepted; it and those after it are not queued")
        #expect(outbox.count == 1)
        outbox.close()
    }
}
