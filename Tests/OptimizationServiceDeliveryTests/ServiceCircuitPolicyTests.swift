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
        #expect(delivery.recordExperienceOutcome(["ok": false, "kind": "timeout"]))
        clock.advance(by: .milliseconds(5_000))
        #expect(delivery.admitExperienceCall())
        #expect(!delivery.recordExperienceOutcome(["ok": true]))
        #expect(delivery.admitExperienceCall())
        #expect(delivery.admitExperienceCall())
    }

    @Test func tracesAndMetricsClassifyEveryStatusAsTheCoreDoes() async throws {
        let service = Self.service(nil, clock: ManualClock())
        try await service.start()
        defer { Task { await service.shutdown() } }
        let engine = try #require(service.poolRuntimes.first?.engine)
        let text = try #require(try engine.evaluate(
            "JSON.stringify(Array.from({length: 500}, function (_, i) { return __optimization.apiResponse.classifyStatus(100 + i); }))").stringValue)
        let kinds = try #require(try JSONValue(jsonText: text).arrayValue)
        for (offset, kind) in kinds.enumerated() {
            #expect(service.statusKinds.kind(of: 100 + offset) == kind.stringValue, "status \(100 + offset)")
            #expect(DeliveryOutcome.kind(ofStatus: 100 + offset) == kind.stringValue, "Swift delivery, status \(100 + offset)")
        }
        #expect(service.statusKinds.kind(of: 503) == "retry")
        #expect(service.statusKinds.kind(of: 404) == "disable")
    }

    @Test func aProfileOverloadDoesNotCountAgainstTheCircuit() async throws {
        let service = Self.service(QueueFlushPolicy(maxConsecutiveFailures: 1, circuitOpenDuration: .seconds(5)), clock: ManualClock())
        try await service.start()
        defer { Task { await service.shutdown() } }
        let delivery = try #require(service.running?.delivery)
        // One visitor's overloaded profile says nothing about the API's health.
        #expect(delivery.admitExperienceCall())
        #expect(!delivery.recordExperienceOutcome(["ok": false, "kind": "retry", "status": 429, "code": "ERR_PROFILE_OVERLOAD"]))
        #expect(!service.isExperienceCircuitOpen)
        // Any other transient failure opens it (the limit is 1).
        #expect(delivery.admitExperienceCall())
        #expect(delivery.recordExperienceOutcome(["ok": false, "kind": "retry", "status": 503]))
        #expect(service.isExperienceCircuitOpen)
    }
}
