import InMemoryTracing
import MetricsTestKit
import Optimization
import OptimizationTestSupport
import OptimizationTesting
import Testing
import Tracing

/// ``OFREPEvaluator``'s evaluations as OpenTelemetry flag evaluations: one
/// `feature_flag.evaluation` event per flag answered (on the task's current span, with the
/// service's tracer) or per single-flag request that failed, and a count by key, variant and
/// reason; never the targeting key.
@Suite("OFREP evaluation telemetry", .hangBound)
struct OFREPTelemetryTests {
    typealias Key = OptimizationTelemetry.Attribute
    static let token = "ofrep-telemetry-token-0123456789abcdef"

    static let flagged: JSONValue = [
        "profile": ["id": "x"],
        "experiences": [["experienceId": "exp-hero", "variantIndex": 1, "variants": ["a": "b"]]],
        "changes": [
            ["type": "Variable", "key": "hero-cta-color", "value": "#d73a49", "meta": ["experienceId": "exp-hero", "variantIndex": 1]],
            ["type": "Variable", "key": "free-shipping", "value": 50, "meta": ["experienceId": "exp-ship", "variantIndex": 0]],
        ],
    ]

    private func post(_ path: String, targetingKey: String) -> OFREPRequest {
        OFREPRequest(
            method: "POST", path: path,
            headers: [(name: "Authorization", value: "Bearer \(Self.token)"), (name: "Content-Type", value: "application/json")],
            body: Array(#"{"context":{"targetingKey":"\#(targetingKey)"}}"#.utf8))
    }

    @Test func eachEvaluationIsAnEventOnTheCurrentSpanAndACountAndACachedAnswerSaysSo() async throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        try await LocalOptimizationAPIServer.withRunning { server in
            server.setExperienceData(perProfile: { _ in Self.flagged })
            try await withService(server, metrics: metrics, tracer: tracer) { service in
                let evaluator = try OFREPEvaluator(
                    service: service, configuration: OFREPConfiguration(credentials: [.bearerToken(Self.token)], targetingKeys: .profileIds), metricsFactory: metrics)
                let statuses = await tracer.withSpan("POST /ofrep") { _ -> [Int?] in
                    var statuses: [Int?] = []
                    for key in ["hero-cta-color", "hero-cta-color", "free-shipping", "no-such-flag"] {
                        statuses.append(await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/\(key)", targetingKey: "secret-visitor"))?.status)
                    }
                    return statuses
                }
                #expect(statuses == [200, 200, 200, 404])
                let span = try #require(tracer.finishedSpans.first { $0.operationName == "POST /ofrep" })
                let events = span.events.filter { $0.name == OptimizationTelemetry.featureFlagEvaluationEventName }
                try #require(events.count == 4, "one per evaluation: the flag read inside is not counted twice")
                #expect(events.map { $0.attributes.get(Key.featureFlagKey) } == ["hero-cta-color", "hero-cta-color", "free-shipping", "no-such-flag"])
                #expect(events.map { $0.attributes.get(Key.featureFlagResultReason) } == ["targeting_match", "cached", "cached", "error"])
                #expect(events.map { $0.attributes.get(Key.featureFlagResultVariant) } == ["variant-1", "variant-1", "baseline", nil])
                #expect(events[3].attributes.get(Key.errorType) == "flag_not_found")
                for event in events {
                    #expect(event.attributes.get(Key.featureFlagProviderName) == .string(OptimizationTelemetry.providerName))
                    event.attributes.forEach { _, value in #expect(!"\(value)".contains("secret-visitor"), "the targeting key is never recorded") }
                }
                let label = OptimizationTelemetry.Metric.flagEvaluations
                #expect(metrics.counterTotal(label: label, dimensions: [("key", "hero-cta-color"), ("variant", "variant-1"), ("reason", "targeting_match")]) == 1)
                #expect(metrics.counterTotal(label: label, dimensions: [("key", "hero-cta-color"), ("variant", "variant-1"), ("reason", "cached")]) == 1)
                #expect(metrics.counterTotal(label: label, dimensions: [("key", "no-such-flag"), ("variant", "none"), ("reason", "error")]) == 1)
            }
        }
    }

    @Test func aRequestWithoutATargetingKeyIsAnErrorEventWithItsOpenFeatureCode() async throws {
        let tracer = InMemoryTracer()
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, tracer: tracer) { service in
                let evaluator = try OFREPEvaluator(service: service, configuration: OFREPConfiguration(credentials: [.bearerToken(Self.token)], targetingKeys: .profileIds))
                let status = await tracer.withSpan("POST /ofrep") { _ in
                    await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/hero-cta-color", targetingKey: ""))?.status
                }
                #expect(status == 400)
                let event = try #require(tracer.finishedSpans.first?.events.first)
                #expect(event.name == OptimizationTelemetry.featureFlagEvaluationEventName)
                #expect(event.attributes.get(Key.featureFlagResultReason) == "error")
                #expect(event.attributes.get(Key.errorType) == "targeting_key_missing")
            }
        }
    }
}
