import JavaScriptHost
import OptimizationDelivery
import OptimizationJSON
import Testing
import OptimizationTestSupport

/// The client's use of the queue: one visitor whose profile arrives later, online and offline,
/// and a last attempt when it closes.
@Suite("Insights queue of one visitor", .hangBound)
struct VisitorInsightsTests {
    static func event(_ index: Int) -> (messageId: String, eventJSON: String) {
        ("v-e\(index)", #"{"type":"component","messageId":"v-e\#(index)"}"#)
    }

    static func accept(_ queue: InsightsQueue, _ indices: Range<Int>) throws {
        for index in indices {
            let event = event(index)
            try queue.enqueueForVisitor(messageId: event.messageId, consent: true, eventJSON: event.eventJSON)
        }
    }

    @Test func eventsBeforeTheFirstProfileAreHeldAndJoinIt() async throws {
        let transport = ScriptedTransport()
        let clock = ManualClock()
        let queue = makeQueue(transport: transport, clock: clock)
        try Self.accept(queue, 0..<30)
        #expect(queue.count == 30)
        await queue.flush()
        clock.advance(by: .seconds(60))
        #expect(transport.requests.isEmpty, "held events are neither flushed nor counted towards the threshold or the timer")
        queue.visitorProfileChanged(("p-9", #"{"id":"p-9","traits":{}}"#))
        try Self.accept(queue, 30..<31)
        await queue.flush()
        let batches = try #require(try JSONValue(jsonText: transport.requests.first?.body ?? "").arrayValue)
        #expect(batches.count == 1 && batches[0]["profile"]?["id"] == "p-9")
        #expect(messageIds(transport.requests[0]) == (0...30).map { "v-e\($0)" })
    }

    @Test func offlineNothingIsSentAndComingBackEndsTheBackoffWait() async throws {
        let transport = ScriptedTransport()
        let clock = ManualClock()
        let queue = makeQueue(transport: transport, clock: clock, policy: .with { $0.baseBackoff = .seconds(20); $0.maxBackoff = .seconds(20) })
        queue.visitorProfileChanged(("p", #"{"id":"p"}"#))
        transport.script(.status(503))
        try Self.accept(queue, 0..<2)
        await queue.flush()
        queue.setOnline(false)
        clock.advance(by: .seconds(25))
        try Self.accept(queue, 2..<40)
        await queue.flush()
        #expect(transport.requests.count == 1, "offline: neither the retry, the threshold nor flush() sends")
        queue.setOnline(true)
        await transport.waitForRequests(2)
        await queue.flush()
        #expect(messageIds(transport.requests[1]).count == 40)
        #expect(queue.count == 0)
    }

    @Test func closingMakesALastAttemptAlsoOfflineButNotDuringABackoffWait() async throws {
        let transport = ScriptedTransport()
        let reports = Reports()
        let queue = makeQueue(transport: transport, clock: ManualClock(), reports: reports)
        queue.visitorProfileChanged(("p", #"{"id":"p"}"#))
        try Self.accept(queue, 0..<3)
        queue.setOnline(false)
        transport.script(.status(500))
        let flight = try #require(queue.closeAfterFinalFlush())
        await flight.value
        #expect(messageIds(transport.requests[0]) == ["v-e0", "v-e1", "v-e2"])
        #expect(reports.queueEvents.isEmpty, "a request that ends after close reports nothing")

        let waiting = makeQueue(transport: transport, clock: ManualClock())
        waiting.visitorProfileChanged(("p", #"{"id":"p"}"#))
        try Self.accept(waiting, 0..<1)
        transport.script(.status(503))
        await waiting.flush()
        #expect(waiting.closeAfterFinalFlush() == nil, "a backoff wait holds the last attempt back")
        #expect(transport.requests.count == 2)
    }

    @Test func purgingDiscardsHeldAndQueuedEventsAndAFlightChangesNothingAfterwards() async throws {
        let transport = ScriptedTransport()
        let reports = Reports()
        let queue = makeQueue(transport: transport, clock: ManualClock(), reports: reports)
        try Self.accept(queue, 0..<2)
        queue.visitorProfileChanged(("p", #"{"id":"p"}"#))
        transport.hold()
        let flight = Task { await queue.flush() }
        await transport.waitForRequests(1)
        try Self.accept(queue, 2..<3)
        queue.purge()
        #expect(queue.count == 0)
        transport.release()
        await flight.value
        #expect(queue.count == 0)
        #expect(reports.removed.isEmpty, "a purge reports nothing; the answer to the purged flight is ignored")
        #expect(transport.requests.count == 1)
    }
}
