import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import OptimizationTesting
import Testing

/// A service never runs two Experience calls for one profile at the same time (the API refuses
/// concurrent work on a profile with 429 `ERR_PROFILE_OVERLOAD`), and retries that refusal
/// within the call's budget.
@Suite("Experience calls per profile", .hangBound)
struct ProfileOrderingTests {
    /// A 429 `ERR_PROFILE_OVERLOAD` answer (Fixtures/experience-v2/error-profile-overload.json).
    static var overload: ScriptedResponse {
        get throws { .status(429, body: String(decoding: try fixtureData("experience-v2/error-profile-overload.json"), as: UTF8.self)) }
    }

    static func service(
        _ server: LocalOptimizationAPIServer, clock: any HostClock, engines: Int = 2, flush: QueueFlushPolicy? = nil,
        timeout: Duration = .seconds(10)
    ) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                spaceId: "space-1", environment: "master",
                // The transport's own deadline is on the wall clock: far beyond any test, so only
                // the ManualClock's budget ends a held request (a loaded CI machine takes seconds).
                api: OptimizationAPIConfig(
                    experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL, requestTimeout: .seconds(600)),
                queuePolicy: flush.map { QueuePolicy(flush: $0) }),
            options: .init(engines: engines, experienceTimeout: timeout), environment: .init(clock: clock))
    }

    @Test func concurrentRequestsOfOneVisitorNeverOverlapAtTheServer() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            // Each answer takes a while, so calls that were not ordered would overlap.
            for _ in 0..<6 { server.enqueue(.delay(.milliseconds(40)), for: .experience) }
            let service = Self.service(server, clock: ManualClock(), engines: 3)
            try await service.start()
            let outcomes = try await withThrowingTaskGroup(of: EventOutcome.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        let request = service.forRequest(RequestOptions(consent: true, profileId: "visitor-1"))
                        return try await request.track(event: "tab-\(index)").outcome
                    }
                }
                return try await group.reduce(into: [EventOutcome]()) { $0.append($1) }
            }
            await service.shutdown()
            #expect(outcomes.allSatisfy { $0 == .delivered }, "\(outcomes)")
            #expect(server.requests(matching: .experience).count == 6)
            #expect(server.peakConcurrentProfileRequests["visitor-1"] == 1)
            #expect(service.profileCalls.waitingCount == 0)
        }
    }

    @Test func theClientsCallsForItsVisitorNeverOverlapEither() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            for _ in 0..<4 { server.enqueue(.delay(.milliseconds(40)), for: .experience) }
            let client = OptimizationClient(environment: .init(clock: ManualClock(), storage: .disabled))
            try client.initialize(config: OptimizationConfig(
                spaceId: "space-1", environment: "master", defaults: StorageDefaults(consent: true, profile: ["id": "visitor-1"]),
                api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)))
            defer { client.destroy() }
            let outcomes = try await withThrowingTaskGroup(of: EventOutcome.self) { group in
                for index in 0..<4 {
                    group.addTask { try await client.track(event: "tab-\(index)").outcome }
                }
                return try await group.reduce(into: [EventOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == .delivered || $0 == .accepted }, "\(outcomes)")
            try await client.flush()
            #expect(server.requests(matching: .experience).flatMap(\.deliveredEvents).count == 4)
            #expect(server.peakConcurrentProfileRequests["visitor-1"] == 1)
        }
    }

    @Test func differentVisitorsDoNotWaitForEachOther() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            server.enqueue(.hang, for: .pathPrefix("/experience/v3/spaces/space-1/environments/master/profiles/slow"))
            let clock = ManualClock()
            let service = Self.service(server, clock: clock)
            try await service.start()
            let slow = Task { try await service.forRequest(RequestOptions(consent: true, profileId: "slow")).page().outcome }
            try await server.waitForRequests(count: 1, matching: .experience)
            // Another visitor's call goes through while the first one hangs.
            #expect(try await service.forRequest(RequestOptions(consent: true, profileId: "fast")).page().outcome == .delivered)
            clock.advance(by: .seconds(10))
            let slowOutcome = try await slow.value
            #expect(slowOutcome == .timedOut(after: .seconds(10)), "\(slowOutcome)")
            await service.shutdown()
        }
    }

    @Test func aCallThatWaitsLongerThanItsBudgetGivesUpWithoutARequest() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            server.enqueue(.hang, for: .experience)
            let clock = ManualClock()
            let service = Self.service(server, clock: clock)
            try await service.start()
            let first = Task {
                try await service.forRequest(RequestOptions(consent: true, profileId: "p-1", experienceTimeout: .seconds(10))).page().outcome
            }
            try await server.waitForRequests(count: 1, matching: .experience)
            let second = Task {
                try await service.forRequest(RequestOptions(consent: true, profileId: "p-1", experienceTimeout: .seconds(1))).page().outcome
            }
            try await yieldUntil { service.profileCalls.waitingCount > 0 }
            clock.advance(by: .seconds(1))
            #expect(try await second.value == .timedOut(after: .seconds(1)))
            #expect(server.requests(matching: .experience).count == 1, "the second call never reached the API")
            clock.advance(by: .seconds(9))
            #expect(try await first.value == .timedOut(after: .seconds(10)))
            await service.shutdown()
        }
    }

    @Test func anOverloadedProfileIsRetriedWithinTheBudget() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            // The test kit's own overload answer, then the fixture's.
            server.enqueue(.profileOverload, try Self.overload, for: .experience)
            let fastBackoff = QueueFlushPolicy(baseBackoff: .milliseconds(1), maxBackoff: .milliseconds(2))
            let clock = ManualClock()
            let service = Self.service(server, clock: clock, flush: fastBackoff)
            try await service.start()
            let budgetEnds = clock.now() + 10_000
            let call = Task { try await service.forRequest(RequestOptions(consent: true, profileId: "p-1")).track(event: "bought") }
            for answered in 1...2 {
                try await server.waitForRequests(count: answered, matching: .experience)
                // The retry waits its backoff on the service's clock: the first timer due before the
                // budget (10 s) ends.
                var backoffDue: Double?
                try await yieldUntil {
                    if let due = clock.nextDueTime, due < budgetEnds { backoffDue = due }
                    return backoffDue != nil
                }
                clock.advance(by: .milliseconds(max(0, (backoffDue ?? 0) - clock.now())))
            }
            let result = try await call.value
            await service.shutdown()
            #expect(result.outcome == .delivered, "\(result.outcome)")
            #expect(server.requests(matching: .experience).count == 3)
            #expect(!service.isExperienceCircuitOpen)
        }
    }

    @Test func anOverloadThatOutlastsTheBudgetIsATypedFailureWithItsCode() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            server.enqueue(contentsOf: Array(repeating: try Self.overload, count: 10), for: .experience)
            // Backoff of exactly 1 s against a 3 s budget, on the manual clock: attempts at 0, 1 and
            // 2 s; after the third answer the next wait would end at the budget, so the overload is
            // the outcome.
            let clock = ManualClock()
            let backoff = QueueFlushPolicy(baseBackoff: .seconds(1), maxBackoff: .seconds(1), jitterRatio: 0)
            let service = Self.service(server, clock: clock, flush: backoff, timeout: .seconds(3))
            try await service.start()
            let call = Task { try await service.forRequest(RequestOptions(consent: true, profileId: "p-1")).track(event: "bought") }
            for attempt in 1...2 {
                try await server.waitForRequests(count: attempt, matching: .experience)
                // The engine has read the answer once the retry is due one backoff from now.
                try await yieldUntil { clock.nextDueTime == clock.now() + 1_000 }
                clock.advance(by: .seconds(1))
            }
            let result = try await call.value
            await service.shutdown()
            guard case .failed(status: 429, code: "ERR_PROFILE_OVERLOAD", _) = result.outcome else {
                Issue.record("\(result.outcome)")
                return
            }
            #expect(server.requests(matching: .experience).count == 3)
        }
    }
}
