import Foundation
@_spi(Benchmarking) import JavaScriptHost
import OptimizationDelivery
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@_spi(Benchmarking) @testable import OptimizationServiceFace
import OptimizationTesting
import Synchronization
import Testing

/// "JavaScript decides, Swift delivers" for the service's Experience calls: the request's engine
/// builds the Experience request and interprets its answer (two crossings); Swift sends it
/// without holding an engine, within the budget on the injected clock, and retries an
/// overloaded profile with the delivery policy's backoff.
@Suite("OptimizationService: Swift delivers the Experience calls", .hangBound)
struct ServiceExperienceDeliveryTests {
    /// A 200 answer of the Experience API for a new visitor.
    static var delivered: FetchResponse {
        let body: JSONValue = ["data": VisitorData.newVisitor, "message": "", "error": .null]
        return FetchResponse(status: 200, headers: ["Content-Type": "application/json"], body: try! body.jsonText())
    }

    /// A 429 `ERR_PROFILE_OVERLOAD` answer, with a `Retry-After` in seconds when given.
    static func overload(retryAfterSeconds: Int? = nil) -> FetchResponse {
        let body = #"{"data":null,"message":"Too many concurrent requests for this profile","error":{"code":"ERR_PROFILE_OVERLOAD"}}"#
        return FetchResponse(status: 429, headers: retryAfterSeconds.map { ["Retry-After": "\($0)"] } ?? [:], body: body)
    }

    static func service(
        _ transport: ScriptedExperienceTransport, clock: ManualClock, engines: Int = 1, flush: QueueFlushPolicy? = nil,
        timeout: Duration = .seconds(10)
    ) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                clientId: "org-1",
                api: OptimizationAPIConfig(experienceBaseURL: "https://experience.test/", insightsBaseURL: "https://insights.test/"),
                queuePolicy: flush.map { QueuePolicy(flush: $0) }),
            options: .init(engines: engines, experienceTimeout: timeout), environment: .init(clock: clock, transport: transport))
    }

    @Test func theEngineIsFreeWhileItsExperienceRequestIsInFlight() async throws {
        let clock = ManualClock()
        let transport = ScriptedExperienceTransport(clock: clock)
        transport.script([nil])  // the first Experience request is held until released
        let service = Self.service(transport, clock: clock, engines: 1)
        try await service.start()
        let first = Task { try await service.forRequest(RequestOptions(consent: true, profileId: "visitor-a")).page() }
        try await eventually("the Experience request is sent") { transport.experienceRequests.count == 1 }

        // The pool's only engine serves another request meanwhile: an Insights call and a resolve.
        let other = service.forRequest(RequestOptions(consent: true, profileId: "visitor-b"))
        let click = try await other.trackClick(TrackClickPayload(componentId: "hero"))
        #expect(click.accepted)
        let selections = try SelectedOptimizations(json: VisitorData.newVisitor["experiences"]!)
        #expect(service.resolveOptimizedEntry(baseline: VisitorData.hero, selectedOptimizations: selections).entryId == VisitorData.heroForNewVisitor)
        #expect(transport.experienceRequests.count == 1)

        transport.release(with: Self.delivered)
        let result = try await first.value
        #expect(result.outcome == .delivered, "\(result.outcome)")
        #expect(result.data?["profile"]?["id"] == VisitorData.newVisitor["profile"]?["id"])
        await service.shutdown()
    }

    @Test func anyEngineOfThePoolInterpretsTheAnswer() async throws {
        let clock = ManualClock()
        let transport = ScriptedExperienceTransport(clock: clock)
        transport.script([nil])
        let service = Self.service(transport, clock: clock, engines: 2)
        try await service.start()
        let engines = service.measuredEngines
        let before = engines.map(\.crossingCounts.intoJavaScript)
        let finished = Atomic(false)
        let call = Task {
            let result = try await service.forRequest(RequestOptions(consent: true, profileId: "visitor-a")).page()
            finished.store(true, ordering: .releasing)
            return result
        }
        try await eventually("the Experience request is sent") { transport.experienceRequests.count == 1 }
        // The engine that built the request is held by another thread when the answer arrives.
        let builder = try #require(engines.indices.first { engines[$0].crossingCounts.intoJavaScript > before[$0] })
        let held = DispatchSemaphore(value: 0)
        let unhold = DispatchSemaphore(value: 0)
        Thread {
            engines[builder].withExclusiveAccess {
                held.signal()
                unhold.wait()
            }
        }.start()
        held.wait()
        transport.release(with: Self.delivered)
        try await eventually("the call finished while the engine that built its request was held") { finished.load(ordering: .acquiring) }
        unhold.signal()
        #expect(try await call.value.outcome == .delivered)
        let other = 1 - builder
        #expect(engines[other].crossingCounts.intoJavaScript > before[other], "the other engine interpreted the answer")
        await service.shutdown()
    }

    @Test func anOverloadIsRetriedOnTheClockWithThePolicysBackoffAndAtLeastRetryAfter() async throws {
        let clock = ManualClock()
        let start = clock.now()
        let transport = ScriptedExperienceTransport(clock: clock)
        // Backoff 1 s, 2 s, 4 s… without jitter; the first overload asks for 3 s.
        transport.script([Self.overload(retryAfterSeconds: 3), Self.overload(), Self.delivered])
        let backoff = QueueFlushPolicy(baseBackoff: .seconds(1), maxBackoff: .seconds(8), jitterRatio: 0)
        let service = Self.service(transport, clock: clock, flush: backoff, timeout: .seconds(10))
        try await service.start()
        let call = Task { try await service.forRequest(RequestOptions(consent: true, profileId: "p-1")).track(event: "bought") }
        try await eventually("the first attempt's wait is armed") { clock.nextDueTime == start + 3_000 }
        clock.advance(by: .milliseconds(2_999))
        #expect(transport.experienceRequests.count == 1, "Retry-After (3 s) outweighs the first backoff (1 s)")
        clock.advance(by: .milliseconds(1))
        try await eventually("the second attempt's wait is armed") { clock.nextDueTime == start + 5_000 }
        #expect(transport.experienceRequests.count == 2)
        clock.advance(by: .milliseconds(2_000))
        let result = try await call.value
        #expect(result.outcome == .delivered, "\(result.outcome)")
        #expect(transport.experienceSendTimes.map { $0 - start } == [0, 3_000, 5_000], "the second backoff doubles to 2 s")
        #expect(!service.isExperienceCircuitOpen)
        await service.shutdown()
    }

    @Test func anOverloadWhoseWaitWouldOutlastTheBudgetIsTheOutcome() async throws {
        let clock = ManualClock()
        let transport = ScriptedExperienceTransport(clock: clock)
        // Retry-After 5 s against a budget of 4 s: no second attempt.
        transport.script([Self.overload(retryAfterSeconds: 5), Self.delivered])
        let backoff = QueueFlushPolicy(baseBackoff: .milliseconds(100), maxBackoff: .milliseconds(100), jitterRatio: 0)
        let service = Self.service(transport, clock: clock, flush: backoff, timeout: .seconds(4))
        try await service.start()
        let result = try await service.forRequest(RequestOptions(consent: true, profileId: "p-1")).track(event: "bought")
        guard case .failed(status: 429, code: "ERR_PROFILE_OVERLOAD", _) = result.outcome else {
            Issue.record("\(result.outcome)")
            return
        }
        #expect(transport.experienceRequests.count == 1)
        #expect(clock.pendingTimerCount == 0, "no retry and no budget timer left behind")
        #expect(!service.isExperienceCircuitOpen, "an overloaded profile says nothing about the API's health")
        await service.shutdown()
    }

    @Test func aBudgetOverrunIsATimeoutAndCancelsTheRequest() async throws {
        let clock = ManualClock()
        let transport = ScriptedExperienceTransport(clock: clock)
        transport.script([nil])
        let service = Self.service(transport, clock: clock, timeout: .milliseconds(250))
        try await service.start()
        let call = Task { try await service.forRequest(RequestOptions(consent: true)).page() }
        try await eventually("the Experience request is sent") { transport.experienceRequests.count == 1 }
        clock.advance(by: .milliseconds(249))
        #expect(transport.cancelledCount == 0)
        clock.advance(by: .milliseconds(1))
        let result = try await call.value
        #expect(result.accepted && result.outcome == .timedOut(after: .milliseconds(250)), "\(result.outcome)")
        try await eventually("the held request saw its cancellation") { transport.cancelledCount == 1 }
        #expect(transport.heldCount == 0)
        await service.shutdown()
    }

    @Test func shutdownCancelsAnExperienceRequestInFlight() async throws {
        let clock = ManualClock()
        let transport = ScriptedExperienceTransport(clock: clock)
        transport.script([nil])
        let service = Self.service(transport, clock: clock)
        try await service.start()
        let call = Task { try await service.forRequest(RequestOptions(consent: true)).page() }
        try await eventually("the Experience request is sent") { transport.experienceRequests.count == 1 }
        await service.shutdown()
        await #expect(throws: OptimizationError.shutDown) { try await call.value }
        try await eventually("the held request saw its cancellation") { transport.cancelledCount == 1 }
    }

    @Test func anExperienceCallCrossesIntoJavaScriptTwice() async throws {
        let clock = ManualClock()
        let transport = ScriptedExperienceTransport(clock: clock, answer: Self.delivered)
        let service = Self.service(transport, clock: clock, engines: 1)
        try await service.start()
        let engines = service.measuredEngines
        let request = service.forRequest(RequestOptions(consent: true, profileId: "p-1"))
        _ = try await request.page()  // warm-up
        let calls = 16
        let before = engines.crossingCounts
        for index in 0..<calls {
            #expect(try await request.track(event: "e\(index)").outcome == .delivered)
        }
        let sticky = try await request.trackView(
            TrackViewPayload(componentId: "hero", viewId: "v-1", viewDuration: .milliseconds(2_000), sticky: true))
        #expect(sticky.outcome == .delivered)
        let after = engines.crossingCounts
        // Into JavaScript: the call and the interpretation. Into the host: at most one batch of
        // message ids (32 per crossing) for the 18 events; no fetch, timer, clock or settle.
        #expect(after.intoJavaScript - before.intoJavaScript == 2 * (calls + 1))
        #expect(after.intoHost - before.intoHost <= 1, "\(after.intoHost - before.intoHost) crossings into the host")
        #expect(transport.experienceRequests.count == calls + 2)
        await service.shutdown()
    }
}

/// A transport whose Experience answers a test scripts: each request takes the next scripted
/// answer (`nil`: held until ``release(with:)``), then the default answer. It records when each
/// Experience request was sent (on the clock) and how many held requests were cancelled.
/// Insights requests are answered 200 at once.
final class ScriptedExperienceTransport: FetchTransport, Sendable {
    private struct State {
        var script: [FetchResponse?] = []
        var sent: [FetchRequest] = []
        var sentAt: [Double] = []
        var held: [(id: Int, continuation: CheckedContinuation<FetchResponse, any Error>)] = []
        var cancelledBeforeHeld: Set<Int> = []
        var cancelled = 0
    }

    private let state = Mutex(State())
    private let clock: any HostClock
    private let answer: FetchResponse

    init(clock: any HostClock, answer: FetchResponse = FetchResponse(status: 503)) {
        self.clock = clock
        self.answer = answer
    }

    func script(_ answers: [FetchResponse?]) {
        state.withLock { $0.script += answers }
    }

    var experienceRequests: [FetchRequest] { state.withLock { $0.sent } }
    var experienceSendTimes: [Double] { state.withLock { $0.sentAt } }
    var cancelledCount: Int { state.withLock { $0.cancelled } }
    var heldCount: Int { state.withLock { $0.held.count } }

    /// Answers the oldest held request.
    func release(with response: FetchResponse) {
        let held = state.withLock { $0.held.isEmpty ? nil : $0.held.removeFirst() }
        held?.continuation.resume(returning: response)
    }

    func send(_ request: FetchRequest) async throws -> FetchResponse {
        guard request.url.hasPrefix("https://experience.test/") else { return FetchResponse(status: 200) }
        let now = clock.now()
        let (id, scripted) = state.withLock { state -> (Int, FetchResponse??) in
            state.sent.append(request)
            state.sentAt.append(now)
            return (state.sent.count, state.script.isEmpty ? .some(answer) : .some(state.script.removeFirst()))
        }
        if let response = scripted ?? nil { return response }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<FetchResponse, any Error>) in
                let cancelled = state.withLock { state -> Bool in
                    if state.cancelledBeforeHeld.remove(id) != nil { return true }
                    state.held.append((id, continuation))
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let held = state.withLock { state -> CheckedContinuation<FetchResponse, any Error>? in
                state.cancelled += 1
                guard let index = state.held.firstIndex(where: { $0.id == id }) else {
                    state.cancelledBeforeHeld.insert(id)
                    return nil
                }
                return state.held.remove(at: index).continuation
            }
            held?.resume(throwing: CancellationError())
        }
    }
}
