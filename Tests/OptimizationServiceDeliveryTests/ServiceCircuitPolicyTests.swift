import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationServiceDelivery
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import OptimizationTesting
import Testing

/// The service's Experience calls go through one circuit breaker (`DeliveryCircuit`, shared by
/// every engine of the pool), with the thresholds of the configured queue flush policy and the
/// defaults otherwise.
@Suite("OptimizationService Experience circuit")
struct ServiceCircuitPolicyTests {
    static func service(_ policy: QueueFlushPolicy?, clock: ManualClock) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                clientId: "org-1",
                api: OptimizationAPIConfig(experienceBaseURL: "http://127.0.0.1:1/experience/", insightsBaseURL: "http://127.0.0.1:1/insights/"),
                queuePolicy: policy.map { QueuePolicy(flush: $0) }),
            options: .init(engines: 1), environment: .init(clock: clock))
    }

    @Test func withoutAPolicyTheCircuitOpensAfterTheCoresDefaultFailures() async throws {
        let clock = ManualClock()
        let service = Self.service(nil, clock: clock)
        try await service.start()
        defer { Task { await service.shutdown() } }
        let engine = try #require(service.poolRuntimes.first?.engine)
        // The service's delivery numbers are Swift's alone: its engines load no flush policy.
        #expect(try engine.evaluate("typeof __optimization.queueFlushPolicy") == .string("undefined"))
        let failures = DeliveryPolicy.standard.maxConsecutiveFailures
        let request = service.forRequest(RequestOptions(consent: true))
        // Nothing listens on port 1: every call is a transient failure.
        for attempt in 1...failures {
            #expect(!service.isExperienceCircuitOpen, "open before failure \(attempt)")
            if case .failed = try await request.page().outcome {} else { Issue.record("call \(attempt) did not fail") }
        }
        #expect(service.isExperienceCircuitOpen)
        #expect(try await request.page().outcome == .circuitOpen)
    }

    @Test func aConfiguredPolicyOpensTheCircuitAndOneProbeIsAdmittedAfterTheWindow() async throws {
        let clock = ManualClock()
        let service = Self.service(QueueFlushPolicy(maxConsecutiveFailures: 3, circuitOpenDuration: .milliseconds(5_000)), clock: clock)
        try await service.start()
        defer { Task { await service.shutdown() } }
        let delivery = try #require(service.running?.delivery)
        let request = service.forRequest(RequestOptions(consent: true))
        for _ in 1...3 { _ = try await request.track(event: "e") }
        #expect(service.isExperienceCircuitOpen)
        #expect(!delivery.admitExperienceCall())
        clock.advance(by: .milliseconds(5_000))
        #expect(!service.isExperienceCircuitOpen)
        // The first caller after the window is the probe; the others fail fast until it reports.
        #expect(delivery.admitExperienceCall())
        #expect(!delivery.admitExperienceCall())
        // A probe that made no request frees the way for the next caller.
        #expect(!delivery.recordExperienceOutcome(nil))
        #expect(delivery.admitExperienceCall())
        // A probe that fails re-opens the circuit; one that succeeds closes it.
        #expect(delivery.recordExperienceOutcome(ExperienceCallOutcome(["ok": false, "kind": "timeout"])))
        clock.advance(by: .milliseconds(5_000))
        #expect(delivery.admitExperienceCall())
        #expect(!delivery.recordExperienceOutcome(ExperienceCallOutcome(["ok": true])))
        #expect(delivery.admitExperienceCall())
        #expect(delivery.admitExperienceCall())
    }

    /// The engine classifies no status itself: an Experience answer takes the kind of its status
    /// in Swift's table (`DeliveryOutcome.kind(ofStatus:)`), which `__service.configure` is handed.
    @Test func anEngineTakesEveryStatusKindFromSwiftsTable() async throws {
        let service = Self.service(nil, clock: ManualClock())
        try await service.start()
        defer { Task { await service.shutdown() } }
        let engine = try #require(service.poolRuntimes.first?.engine)
        let table = try DeliveryOutcome.statusKindTable.jsonText()
        let text = try #require(try engine.evaluate("""
            (function () {
              var statusKinds = __optimization.apiResponse.readStatusKinds(\(table), Error);
              var api = __optimization.createExperienceApi({ clientId: 'org-1', statusKinds: statusKinds });
              return JSON.stringify(Array.from({ length: 500 }, function (_, i) {
                var status = 100 + i;
                return status >= 200 && status <= 299 ? null : api.profileAnswerOutcome(status, {}, '').kind;
              }));
            })()
            """).stringValue)
        let kinds = try #require(try JSONValue(jsonText: text).arrayValue)
        #expect(kinds.count == 500)
        for (offset, kind) in kinds.enumerated() where !kind.isNull {
            #expect(DeliveryOutcome.kind(ofStatus: 100 + offset) == kind.stringValue, "status \(100 + offset)")
        }
        #expect(try engine.evaluate("__optimization.apiResponse.classifyStatus") == .undefined, "the engine has no status table of its own")
    }

    @Test func aProfileOverloadDoesNotCountAgainstTheCircuit() async throws {
        let service = Self.service(QueueFlushPolicy(maxConsecutiveFailures: 1, circuitOpenDuration: .seconds(5)), clock: ManualClock())
        try await service.start()
        defer { Task { await service.shutdown() } }
        let delivery = try #require(service.running?.delivery)
        // One visitor's overloaded profile says nothing about the API's health.
        #expect(delivery.admitExperienceCall())
        #expect(!delivery.recordExperienceOutcome(ExperienceCallOutcome(["ok": false, "kind": "retry", "status": 429, "code": "ERR_PROFILE_OVERLOAD"])))
        #expect(!service.isExperienceCircuitOpen)
        // Any other transient failure opens it (the limit is 1).
        #expect(delivery.admitExperienceCall())
        #expect(delivery.recordExperienceOutcome(ExperienceCallOutcome(["ok": false, "kind": "retry", "status": 503])))
        #expect(service.isExperienceCircuitOpen)
    }
}
