import OptimizationDelivery
import Foundation
import JavaScriptHost
import Logging
import OptimizationJSON
import Synchronization
import Testing
import OptimizationTestSupport

/// The client's Experience queue: order, flights, the senders' tickets, backoff, the circuit,
/// refusals, the cap and the durable window, on a `ManualClock` with a transport the test holds
/// and releases and a recording handler in place of the engine.
@Suite("Experience queue", .hangBound)
struct ExperienceQueueTests {
    @Test func oneFlightCarriesEveryQueuedEventInOrderAndSettlesItsSenders() async throws {
        let transport = ScriptedTransport()
        let (queue, handler, _) = makeExperienceQueue(transport: transport)
        transport.hold()
        let first = try queue.accept(eventJSON: experienceEvent(0), profileId: "p1")
        await transport.waitForRequests(1)
        let second = try queue.accept(eventJSON: experienceEvent(1), profileId: "p1")
        #expect(first.disposition == .awaitsAnswer(ticket: 1))
        #expect(second.disposition == .awaitsAnswer(ticket: 2), "a flight is in progress: the sender waits for the next one")
        transport.release()
        await queue.flush()
        #expect(transport.requests.map(experienceIds) == [["e0"], ["e1"]], "the second flight follows without a clock advance")
        #expect(handler.answers.map(\.disposition) == [.delivered, .delivered])
        #expect(handler.answers.map(\.tickets) == [[1], [2]])
        #expect(handler.built == [["e0"], ["e1"]])
        #expect(queue.count == 0)
    }

    @Test func noRequestLeavesDuringABackoffWaitWhateverIsAskedAndTheRetryHonoursRetryAfter() async throws {
        let transport = ScriptedTransport()
        let clock = ManualClock()
        let reports = Reports()
        let (queue, handler, _) = makeExperienceQueue(transport: transport, clock: clock, reports: reports)
        transport.script(.status(503, headers: ["Retry-After": "3"]))
        _ = try queue.accept(eventJSON: experienceEvent(0), profileId: nil)
        await transport.waitForRequests(1)
        await queue.flush()
        #expect(handler.answers.map(\.disposition) == [.retrying])
        #expect(handler.answers.first?.tickets == [1], "the sender stops waiting; its event stays queued")
        let failure = try #require(reports.queueEvents.first)
        #expect(failure.type == .flushFailure && failure.queue == .experience)
        #expect(failure.context["retryDelayMs"] == 3_000, "Retry-After is the shortest wait (the backoff is 500 ms)")
        // Asked to flush and given new events: nothing leaves during the wait, and nobody waits for it.
        let during = try queue.accept(eventJSON: experienceEvent(1), profileId: nil)
        #expect(during.disposition == .queued)
        clock.advance(by: .milliseconds(2_999))
        await queue.flush()
        #expect(transport.requests.count == 1)
        clock.advance(by: .milliseconds(1))
        await transport.waitForRequests(2)
        await queue.flush()
        #expect(experienceIds(transport.requests[1]) == ["e0", "e1"], "the retry carries both, in order")
        #expect(reports.types == [.flushFailure, .flushRecovered])
        #expect(queue.count == 0)
    }

    @Test func theCircuitOpensAfterTheFailureLimitAndHoldsEveryRequestEvenTheFinalOne() async throws {
        let transport = ScriptedTransport()
        let clock = ManualClock()
        let reports = Reports()
        let policy = DeliveryPolicy.with { $0.maxConsecutiveFailures = 2; $0.circuitOpenDuration = .seconds(60) }
        let (queue, _, _) = makeExperienceQueue(transport: transport, clock: clock, policy: policy, reports: reports)
        transport.script(.failure, .failure)
        _ = try queue.accept(eventJSON: experienceEvent(0), profileId: nil)
        await transport.waitForRequests(1)
        await queue.flush()
        clock.advance(by: .milliseconds(500))
        await transport.waitForRequests(2)
        await queue.flush()
        #expect(reports.types == [.flushFailure, .flushFailure, .circuitOpen])
        #expect(queue.isCircuitOpen)
        queue.setOnline(false)
        queue.setOnline(true)
        clock.advance(by: .seconds(59))
        await queue.flush()
        queue.closeAfterFinalFlush()?.cancel()
        #expect(transport.requests.count == 2, "coming online, a flush, the final flush: nothing leaves while the circuit is open")
    }

    @Test func aRefusedBatchIsDroppedAndTheNextEventsFlow() async throws {
        let transport = ScriptedTransport()
        let reports = Reports()
        let (queue, handler, _) = makeExperienceQueue(transport: transport, reports: reports)
        transport.script(.status(400))
        _ = try queue.accept(eventJSON: experienceEvent(0), profileId: nil)
        await transport.waitForRequests(1)
        await queue.flush()
        #expect(handler.answers.first?.disposition == .dropped)
        #expect(handler.answers.first?.reason.hasPrefix("Experience API answered 400 Bad Request; the batch of 1 event(s) was dropped") == true)
        #expect(reports.types == [.batchDropped])
        #expect(queue.count == 0)
        _ = try queue.accept(eventJSON: experienceEvent(1), profileId: nil)
        await transport.waitForRequests(2)
        await queue.flush()
        #expect(handler.answers.last?.disposition == .delivered)
    }

    @Test func unauthorizedDisablesDeliveryDiscardsEverythingAndRefusesLaterEvents() async throws {
        let transport = ScriptedTransport()
        let reports = Reports()
        let (queue, handler, _) = makeExperienceQueue(transport: transport, reports: reports)
        transport.script(.status(401))
        transport.hold()
        _ = try queue.accept(eventJSON: experienceEvent(0), profileId: nil)
        await transport.waitForRequests(1)
        _ = try queue.accept(eventJSON: experienceEvent(1), profileId: nil)
        transport.release()
        await queue.flush()
        let answer = try #require(handler.answers.first)
        #expect(answer.disposition == .disabled)
        #expect(answer.tickets == [1, 2], "every waiting sender learns of the refusal")
        #expect(reports.queueEvents.first?.type == .deliveryDisabled && reports.queueEvents.first?.context["droppedCount"] == 2)
        #expect(queue.isDisabled && queue.count == 0)
        #expect(try queue.accept(eventJSON: experienceEvent(2), profileId: nil).disposition == .refused)
        #expect(transport.requests.count == 1)
    }

    @Test func offlineEventsWaitAndGoOutInOneRequestWhenTheNetworkReturns() async throws {
        let transport = ScriptedTransport()
        let (queue, _, _) = makeExperienceQueue(transport: transport)
        queue.setOnline(false)
        for index in 0..<3 {
            #expect(try queue.accept(eventJSON: experienceEvent(index), profileId: nil).disposition == .queued)
        }
        await queue.flush()
        #expect(transport.requests.isEmpty)
        queue.setOnline(true)
        await transport.waitForRequests(1)
        await queue.flush()
        #expect(transport.requests.map(experienceIds) == [["e0", "e1", "e2"]])
    }

    @Test func withoutAnOutboxTheCapDropsTheOldestEventsNotInFlightAndReleasesTheirSenders() async throws {
        let transport = ScriptedTransport()
        let reports = Reports()
        let (queue, handler, _) = makeExperienceQueue(
            transport: transport, policy: .with { $0.experienceMaxEvents = 2 }, reports: reports)
        transport.hold()
        _ = try queue.accept(eventJSON: experienceEvent(0), profileId: nil)
        await transport.waitForRequests(1)
        let waiting = try queue.accept(eventJSON: experienceEvent(1), profileId: nil)
        #expect(waiting.disposition == .awaitsAnswer(ticket: 2))
        let full = try queue.accept(eventJSON: experienceEvent(2), profileId: nil)
        #expect(full.released == [2], "e1 was dropped for room; e0 is in flight and stays")
        let drop = try #require(reports.queueEvents.first)
        #expect(drop.type == .offlineDrop && drop.context["droppedCount"] == 1 && drop.context["maxEvents"] == 2)
        transport.release()
        await queue.flush()
        #expect(transport.requests.map(experienceIds) == [["e0"], ["e2"]])
        #expect(handler.answers.count == 2)
    }

    @Test func aPurgeDuringAFlightReleasesItsSendersAndItsAnswerChangesNothing() async throws {
        let transport = ScriptedTransport()
        let clock = ManualClock()
        let (queue, handler, _) = makeExperienceQueue(transport: transport, clock: clock)
        transport.script(.status(503))
        transport.hold()
        _ = try queue.accept(eventJSON: experienceEvent(0), profileId: nil)
        await transport.waitForRequests(1)
        #expect(queue.purge() == [1])
        transport.release()
        await queue.flush()
        #expect(handler.answers.map(\.disposition) == [.stale])
        #expect(queue.count == 0 && !queue.isCircuitOpen)
        clock.advance(by: .seconds(60))
        #expect(transport.requests.count == 1, "no retry is scheduled for purged events")
    }

    @Test func aRequestThatCannotBeBuiltFailsLikeATransportFailureAndKeepsTheEvents() async throws {
        let transport = ScriptedTransport()
        let clock = ManualClock()
        let (queue, handler, _) = makeExperienceQueue(transport: transport, clock: clock)
        handler.failBuilding(true)
        _ = try queue.accept(eventJSON: experienceEvent(0), profileId: nil)
        await queue.flush()
        #expect(transport.requests.isEmpty)
        #expect(handler.answers.map(\.disposition) == [.retrying])
        #expect(queue.count == 1)
        handler.failBuilding(false)
        clock.advance(by: .milliseconds(500))
        await transport.waitForRequests(1)
        await queue.flush()
        #expect(queue.count == 0)
    }

    @Test func theFinalFlushSendsWhatWaitsEvenOfflineAndThenNothingMoreIsSent() async throws {
        let transport = ScriptedTransport()
        let (queue, _, _) = makeExperienceQueue(transport: transport)
        queue.setOnline(false)
        _ = try queue.accept(eventJSON: experienceEvent(0), profileId: nil)
        await queue.closeAfterFinalFlush()?.value
        #expect(transport.requests.map(experienceIds) == [["e0"]])
        _ = try queue.accept(eventJSON: experienceEvent(1), profileId: nil)
        queue.setOnline(true)
        await queue.flush()
        #expect(transport.requests.count == 1)
    }

    @Test func withAnOutboxEveryEventIsStoredFirstTheWindowDrainsInOrderAndARestartResumes() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        let transport = ScriptedTransport()
        let policy = DeliveryPolicy.with { $0.experienceMaxEvents = 2 }
        do {
            let outbox = try DurableInsightsTests.outbox(directory, clock: clock)
            let (queue, _, _) = makeExperienceQueue(transport: transport, clock: clock, policy: policy, outbox: outbox)
            queue.setOnline(false)
            for index in 0..<5 { _ = try queue.accept(eventJSON: experienceEvent(index), profileId: "p1") }
            #expect(outbox.count == 5, "stored before accept returned; nothing dropped for room")
            #expect(queue.count == 2, "a window of two in memory")
            queue.close()
            outbox.close()
        }
        let outbox = try DurableInsightsTests.outbox(directory, clock: clock)
        let (queue, _, _) = makeExperienceQueue(transport: transport, clock: clock, policy: policy, outbox: outbox)
        #expect(queue.resume() == 2)
        await transport.waitForRequests(1)
        await queue.flush()
        #expect(transport.requests.map(experienceIds) == [["e0", "e1"], ["e2", "e3"], ["e4"]])
        #expect(outbox.count == 0, "acknowledged as delivered")
        outbox.close()
    }

    @Test func aFlushWhileAFlightReportsItsAnswerReturnsOnlyOnceTheOutboxIsAcknowledged() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        let outbox = try DurableInsightsTests.outbox(directory, clock: clock)
        defer { outbox.close() }
        let (queue, _, _) = makeExperienceQueue(transport: ScriptedTransport(), clock: clock, outbox: outbox)
        let handler = HookedFlightHandler()
        queue.attach(handler)
        let probe = FlushProbe()
        let storedThen = Mutex<Int?>(nil)
        // Answered 200, the flight tells its handler first: its event is not acknowledged yet.
        handler.onFirstAnswer.set {
            storedThen.withLock { $0 = outbox.count }
            probe.flushUntilItWaits { await queue.flush() }
        }
        _ = try queue.accept(eventJSON: experienceEvent(0), profileId: "p1")
        await queue.flush()
        #expect(handler.recording.answers.map(\.disposition) == [.delivered])
        #expect(storedThen.withLock { $0 } == 1, "the flush was called before the acknowledgement")
        #expect(probe.returnedInsideTheCallback == false, "flush() returned while the flight was still reporting its answer")
        await probe.flushed()
        #expect(outbox.count == 0, "acknowledged before flush() returned")
        #expect(queue.count == 0)
    }

    @Test func aFlushAskedForWhileAFlightReportsItsAnswerFollowsIt() async throws {
        let transport = ScriptedTransport()
        let (queue, _, _) = makeExperienceQueue(transport: transport)
        let handler = HookedFlightHandler()
        queue.attach(handler)
        transport.script(.status(503))
        // Back online while the failed flight reports: the backoff wait ends and a flush is asked for.
        handler.onFirstAnswer.set {
            queue.setOnline(false)
            queue.setOnline(true)
        }
        _ = try queue.accept(eventJSON: experienceEvent(0), profileId: nil)
        await transport.waitForRequests(2)
        await queue.flush()
        #expect(transport.requests.map(experienceIds) == [["e0"], ["e0"]])
        #expect(handler.recording.answers.map(\.disposition) == [.retrying, .delivered])
        #expect(queue.count == 0)
    }
}

/// A ``RecordingFlightHandler`` that runs `onFirstAnswer` inside its first `answered` (after
/// recording it).
final class HookedFlightHandler: ExperienceFlightHandler {
    let recording = RecordingFlightHandler()
    let onFirstAnswer = FirstCall()

    func request(carrying events: [String]) throws -> FetchRequest {
        try recording.request(carrying: events)
    }

    func answered(_ answer: ExperienceFlightAnswer) {
        recording.answered(answer)
        onFirstAnswer.fire()
    }

    func released(tickets: [UInt64]) {
        recording.released(tickets: tickets)
    }
}
/// The handler in place of the engine: builds `{"events": [...]}` and records what it was told.
final class RecordingFlightHandler: ExperienceFlightHandler {
    private struct State {
        var built: [[String]] = []
        var answers: [ExperienceFlightAnswer] = []
        var released: [UInt64] = []
        var failing = false
    }
    private let state = Mutex(State())

    struct BuildFailure: Error {}

    var built: [[String]] { state.withLock { $0.built } }
    var answers: [ExperienceFlightAnswer] { state.withLock { $0.answers } }
    var released: [UInt64] { state.withLock { $0.released } }

    func failBuilding(_ failing: Bool) {
        state.withLock { $0.failing = failing }
    }

    func request(carrying events: [String]) throws -> FetchRequest {
        let failing = state.withLock { state -> Bool in
            if !state.failing {
                state.built.append(events.compactMap { try? JSONValue(jsonText: $0)["messageId"]?.stringValue })
            }
            return state.failing
        }
        if failing { throw BuildFailure() }
        return FetchRequest(
            url: "http://127.0.0.1:1/experience/profiles", method: "POST", headers: ["Content-Type": "text/plain"],
            body: #"{"events":["# + events.joined(separator: ",") + "]}")
    }

    func answered(_ answer: ExperienceFlightAnswer) {
        state.withLock { $0.answers.append(answer) }
    }

    func released(tickets: [UInt64]) {
        state.withLock { $0.released += tickets }
    }
}

/// An Experience event numbered `index` (`messageId` "e<index>").
func experienceEvent(_ index: Int) -> String {
    #"{"type":"track","event":"e","messageId":"e\#(index)","context":{"gdpr":{"isConsentGiven":true}}}"#
}

/// The message ids an Experience request carried, in order.
func experienceIds(_ request: FetchRequest) -> [String] {
    guard let body = request.body, let events = try? JSONValue(jsonText: body)["events"]?.arrayValue else { return [] }
    return events.compactMap { $0["messageId"]?.stringValue }
}

/// A queue over `transport` on `clock` (jitter 0) with a recording handler attached.
func makeExperienceQueue(
    transport: any FetchTransport, clock: ManualClock = ManualClock(), policy: DeliveryPolicy = .standard, outbox: DurableOutbox? = nil,
    reports: Reports = Reports()
) -> (ExperienceQueue, RecordingFlightHandler, Reports) {
    let queue = ExperienceQueue(
        policy: policy, transport: transport, clock: clock, outbox: outbox,
        logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), random: { 0 },
        onQueueEvent: { reports.record($0) })
    let handler = RecordingFlightHandler()
    queue.attach(handler)
    return (queue, handler, reports)
}
