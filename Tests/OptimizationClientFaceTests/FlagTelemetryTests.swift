import InMemoryTracing
import MetricsTestKit
import Optimization
import OptimizationTestSupport
@testable import OptimizationClientFace
import Testing
import Tracing

/// `OptimizationClient.getFlag` as an OpenTelemetry flag evaluation: a `feature_flag.evaluation`
/// event on the task's current span and a count by key, variant and reason.
@Suite("Custom flags through OptimizationClient: evaluation events and counts")
struct FlagTelemetryTests {
    typealias Key = OptimizationTelemetry.Attribute

    private func makeClient(tracer: InMemoryTracer, metrics: TestMetrics, initialized: Bool = true) throws -> OptimizationClient {
        var environment = OptimizationClient.Environment(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled)
        environment.tracer = tracer
        environment.metricsFactory = metrics
        let client = OptimizationClient(environment: environment)
        if initialized {
            try client.initialize(config: OptimizationConfig(clientId: "test-client", channel: "server", defaults: try newVisitorDefaults()))
        }
        return client
    }

    @Test func everyReadIsAnEvaluationEventOnTheCurrentSpanWithoutTheVisitor() throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        let client = try makeClient(tracer: tracer, metrics: metrics)
        defer { client.destroy() }
        tracer.withSpan("render") { _ in
            #expect(client.getFlag("hero-cta-color") == "#d73a49")
            #expect(client.getFlag("missing") == .null)
        }
        let span = try #require(tracer.finishedSpans.first { $0.operationName == "render" })
        let events = span.events.filter { $0.name == OptimizationTelemetry.featureFlagEvaluationEventName }
        try #require(events.count == 2)
        #expect(events[0].attributes.get(Key.featureFlagKey) == "hero-cta-color")
        #expect(events[0].attributes.get(Key.featureFlagResultVariant) == "variant-1")
        #expect(events[0].attributes.get(Key.featureFlagResultReason) == "targeting_match")
        #expect(events[0].attributes.get(Key.featureFlagProviderName) == .string(OptimizationTelemetry.providerName))
        #expect(events[1].attributes.get(Key.featureFlagResultReason) == "error")
        #expect(events[1].attributes.get(Key.errorType) == "flag_not_found")
        let profileId = try #require(client.state.profile?["id"]?.stringValue)
        for event in events {
            #expect(event.attributes.get(Key.featureFlagContextId) == nil)
            event.attributes.forEach { _, value in #expect(!"\(value)".contains(profileId)) }
        }
        let label = OptimizationTelemetry.Metric.flagEvaluations
        #expect(metrics.counterTotal(label: label, dimensions: [("key", "hero-cta-color"), ("variant", "variant-1"), ("reason", "targeting_match")]) == 1)
        #expect(metrics.counterTotal(label: label, dimensions: [("key", "missing"), ("variant", "none"), ("reason", "error")]) == 1)
    }

    @Test func aReadBeforeInitializeIsAProviderNotReadyError() throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        let client = try makeClient(tracer: tracer, metrics: metrics, initialized: false)
        tracer.withSpan("render") { _ in #expect(client.getFlag("hero-cta-color") == .null) }
        let event = try #require(tracer.finishedSpans.first?.events.first)
        #expect(event.name == OptimizationTelemetry.featureFlagEvaluationEventName)
        #expect(event.attributes.get(Key.featureFlagResultReason) == "error")
        #expect(event.attributes.get(Key.errorType) == "provider_not_ready")
    }

    @Test func withoutACurrentSpanAReadIsOnlyCounted() throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        let client = try makeClient(tracer: tracer, metrics: metrics)
        defer { client.destroy() }
        #expect(client.getFlag("hero-cta-color") == "#d73a49")
        #expect(tracer.finishedSpans.isEmpty && tracer.activeSpans.isEmpty)
        #expect(metrics.counterTotal(
            label: OptimizationTelemetry.Metric.flagEvaluations,
            dimensions: [("key", "hero-cta-color"), ("variant", "variant-1"), ("reason", "targeting_match")]) == 1)
    }
}
