import JavaScriptHost
import Logging
import OptimizationDelivery
import OptimizationJSON
import Testing
import OptimizationTestSupport

/// The Insights queue's flush rules, answers, backoff and circuit, on a `ManualClock` with a
/// transport the test holds and releases.
@Suite("Insights queue", .hangBound)
struct InsightsQueueTests {
    @Test func oneRequestCarriesOneBatchPerProfileInArrivalOrder() async throws {
        let transport = ScriptedTransport()
        let queue = makeQueue(transport: transport, clock: ManualClock())
        try queue.enqueue(events(2, profile: "b") + events(1, profile: "a") + events(1, profile: "b", from: 2))
        await queue.flush()
        let request = try #require(transport.requests.first)
        #expect(transport.requests.count == 1)
        #expect(request.method == "POST" && request.headers["Content-Type"] == "application/json")
        let batches = try #require(try JSONValue(jsonText: request.body ?? "").arrayValue)
        #expect(batches.map { $0["profile"]?["id"]?.stringValue } == ["b", "a"])
        #expect(messageIds(request) == ["b-e0", "b-e1", "b-e2", "a-e0"])
        #expect(queue.count == 0)
    }

    @Test func theThresholdStartsAFlushAndTheIntervalFlushesWhatIsLeft() async throws {
        let transport = ScriptedTransport()
        let clock = ManualClock()
        let queue = makeQueue(transport: transport, clock: clock)
        try queue.enqueue(events(24))
        #expect(transport.requests.isEmpty, "below the threshold nothing is sent")
        try queue.enqueue(events(1, from: 24))
        await transport.waitForRequests(1)
        #expect(messageIds(transport.requests[0]).count == 25)
        await queue.flush()
        try queue.enqueue(events(3, from: 25))
        clock.advance(by: .seconds(29))
        #expect(transport.requests.count == 1)
        clock.advance(by: .seconds(1))
        await transport.waitForRequests(2)
        #expect(messageIds(transport.requests[1]) == ["p1-e25", "p1-e26", "p1-e27"])
    }

    @Test func eventsAcceptedDuringAFlightGoOutWithTheNextFlushWithoutAClockAdvance() async throws {
        let transport = ScriptedTransport()
        let queue = makeQueue(transport: transport, clock: ManualClock())
        try queue.enqueue(events(2))
        transport.hold()
        let first = Task { await queue.flush() }
        await transport.waitForRequests(1)
        try queue.enqueue(events(2, from: 2))
        let second = Task { await queue.flush() }
        transport.release()
        await first.value
        await second.value
        #expect(transport.requests.map(messageIds) == [["p1-e0", "p1-e1"], ["p1-e2", "p1-e3"]])
        #expect(queue.count == 0)
    }

    @Test func noRequestLeavesDuringABackoffWaitWhateverIsAskedAndTheRetryHonoursRetryAfter() async throws {
        let transport = ScriptedTransport()
        let clock = ManualClock()
        let reports = Reports()
        let queue = makeQueue(transport: transport, clock: clock, reports: reports)
        transport.script(.status(503, headers: ["Retry-After": "3"]))
        try queue.enqueue(events(2))
        await queue.flush()
        #expect(transport.requests.count == 1)
        let failure = try #require(reports.queueEvents.first)
        #expect(failure.type == .flushFailure)
        #expect(failure.context["retryDelayMs"] == 3_000, "Retry-After is the shortest wait (the backoff is 500 ms)")
        #expect(failure.context["consecutiveFailures"] == 1 && failure.context["queuedEvents"] == 2)
        // Asked to flush, over the threshold, and the periodic timer: nothing leaves during the wait.
        await queue.flush()
        try queue.enqueue(events(30, from: 2))
        clock.advance(by: .milliseconds(2_999))
        await queue.flush()
        #expect(transport.requests.count == 1)
        clock.advance(by: .milliseconds(1))
        await transport.waitForRequests(2)
        await queue.flush()
        #expect(messageIds(transport.requests[1]).count == 32)
        #expect(queue.count == 0)
        #expect(reports.types == [.flushFailure, .flushRecovered])
    }

    @Test func theCircuitOpensAfterTheLimitAndStaysShutUntilItsWindowPassed() async throws {
        let transport = ScriptedTransport()
        let clock = ManualClock()
        let reports = Reports()
        let policy = DeliveryPolicy.with {
            $0.maxConsecutiveFailures = 2
            $0.circuitOpenDuration = .seconds(60)
            $0.baseBackoff = .milliseconds(100)
        }
        let queue = makeQueue(transport: transport, clock: clock, policy: policy, reports: reports)
        transport.script(.failure, .status(500))
        try queue.enqueue(events(1))
        await queue.flush()
        clock.advance(by: .milliseconds(100))
        await transport.waitForRequests(2)
        await queue.flush()
        #expect(queue.isCircuitOpen)
        #expect(reports.types == [.flushFailure, .flushFailure, .circuitOpen])
        #expect(reports.queueEvents.last?.context["retryDelayMs"] == 60_000)
        for _ in 0..<5 {
            clock.advance(by: .seconds(10))
            try queue.enqueue(events(25, from: 100))
            await queue.flush()
        }
        #expect(transport.requests.count == 2, "nothing while the circuit is open")
        clock.advance(by: .seconds(10))
        await transport.waitForRequests(3)
        await queue.flush()
        #expect(!queue.isCircuitOpen && queue.count == 0)
        #expect(reports.types.last == .flushRecovered)
    }

    @Test func aRefusedBatchIsDroppedAndReported() async throws {
        let transport = ScriptedTransport()
        let reports = Reports()
        let queue = makeQueue(transport: transport, clock: ManualClock(), reports: reports)
        transport.script(.status(400))
        try queue.enqueue(events(3))
        await queue.flush()
        #expect(queue.count == 0)
        let dropped = try #require(reports.queueEvents.first)
        #expect(dropped.type == .batchDropped && dropped.context["droppedCount"] == 3 && dropped.context["status"] == 400)
        #expect(dropped.context["droppedEvents"]?[0]?["messageId"] == "p1-e0")
        #expect(reports.removed.map(\.reason) == [.dropped])
    }

    @Test func unauthorizedDisablesDeliveryForGoodAndDiscardsEverything() async throws {
        let transport = ScriptedTransport()
        let reports = Reports()
        // At the limit of credential refusals in a row (one here; repeats: InsightsIsolationTests).
        let queue = makeQueue(
            transport: transport, clock: ManualClock(), policy: .with { $0.maxConsecutiveCredentialRefusals = 1 }, reports: reports)
        transport.script(.status(401))
        try queue.enqueue(events(3))
        await queue.flush()
        #expect(queue.isDisabled && queue.count == 0)
        #expect(reports.queueEvents.map(\.type) == [.deliveryDisabled])
        #expect(reports.queueEvents[0].context["droppedCount"] == 3)
        let later = try queue.enqueue(events(2, from: 3))
        #expect(later.discarded == [0, 1])
        await queue.flush()
        #expect(transport.requests.count == 1)
        #expect(reports.removed.map(\.reason) == [.disabled, .disabled])
        #expect(reports.removed.last?.ids == ["p1-e3", "p1-e4"])
    }

    @Test func aFullQueueDropsTheOldestEventsNotInFlight() async throws {
        let transport = ScriptedTransport()
        let reports = Reports()
        let queue = makeQueue(transport: transport, clock: ManualClock(), policy: .with { $0.insightsMaxEvents = 3 }, reports: reports)
        try queue.enqueue(events(2))
        transport.hold()
        let flight = Task { await queue.flush() }
        await transport.waitForRequests(1)
        try queue.enqueue(events(3, from: 2))
        #expect(queue.count == 3)
        #expect(reports.removed.flatMap(\.ids) == ["p1-e2", "p1-e3"], "in-flight events are never dropped")
        transport.release()
        await flight.value
        await queue.flush()
        #expect(messageIds(transport.requests[1]) == ["p1-e4"])
    }

    @Test func erasureRemovesAProfileAndItsInFlightEventsAreNotCountedTwice() async throws {
        let transport = ScriptedTransport()
        let queue = makeQueue(transport: transport, clock: ManualClock())
        try queue.enqueue(events(2, profile: "gone") + events(1, profile: "kept"))
        transport.hold()
        let flight = Task { await queue.flush() }
        await transport.waitForRequests(1)
        #expect(try queue.eraseProfile("gone") == 2)
        #expect(queue.count == 1)
        try queue.enqueue(events(1, profile: "gone", from: 9))
        transport.release()
        // The flight's answer removes only what it sent and is still queued; the flush goes on
        // with what arrived meanwhile.
        await flight.value
        #expect(transport.requests.map(messageIds) == [["gone-e0", "gone-e1", "kept-e0"], ["gone-e9"]])
        #expect(queue.count == 0)
    }

    @Test func closingStopsTimersAndRefusesEvents() async throws {
        let transport = ScriptedTransport()
        let clock = ManualClock()
        let queue = makeQueue(transport: transport, clock: clock)
        try queue.enqueue(events(1))
        #expect(clock.pendingTimerCount == 1)
        queue.close()
        #expect(clock.pendingTimerCount == 0)
        #expect(throws: DeliveryQueueError.closed) { try queue.enqueue(events(1)) }
        await queue.flush()
        #expect(transport.requests.isEmpty)
    }

    @Test func aFlushWhileAFlightReportsItsAnswerReturnsOnlyOnceItsRemovalsAreReported() async throws {
        let onRemoved = FirstCall()
        let reports = Reports()
        let queue = hookedQueue(transport: ScriptedTransport(), onFirstRemoval: onRemoved, reports: reports)
        let probe = FlushProbe()
        // Answered 200, the flight reports its events' removal (a shared outbox acknowledges there).
        onRemoved.set { probe.flushUntilItWaits { await queue.flush() } }
        try queue.enqueue(events(2))
        await queue.flush()
        #expect(reports.removed.map(\.ids) == [["p1-e0", "p1-e1"]])
        #expect(probe.returnedInsideTheCallback == false, "flush() returned while the flight was still reporting its answer")
        await probe.flushed()
        #expect(queue.count == 0)
    }

    @Test func theThresholdReachedWhileAFlightReportsItsAnswerStartsTheNextFlush() async throws {
        let onRemoved = FirstCall()
        let transport = ScriptedTransport()
        let queue = hookedQueue(transport: transport, onFirstRemoval: onRemoved)
        onRemoved.set { _ = try? queue.enqueue(events(25, from: 25)) }
        try queue.enqueue(events(25))
        await transport.waitForRequests(2)
        await queue.flush()
        #expect(transport.requests.map { messageIds($0).count } == [25, 25])
        #expect(queue.count == 0)
    }

    /// A queue that runs `onFirstRemoval` inside its first `onRemoved` (after recording it).
    private func hookedQueue(transport: ScriptedTransport, onFirstRemoval: FirstCall, reports: Reports = Reports()) -> InsightsQueue {
        InsightsQueue(
            url: "http://127.0.0.1:1/insights/v1/organizations/org/environments/main/events", policy: .standard, transport: transport,
            clock: ManualClock(), logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), random: { 0 },
            onQueueEvent: { reports.record($0) },
            onRemoved: { ids, reason in
                reports.record(ids, reason)
                onFirstRemoval.fire()
            })
    }
}
