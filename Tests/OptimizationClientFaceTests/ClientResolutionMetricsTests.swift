import MetricsTestKit
import Optimization
import OptimizationTestSupport
@testable import OptimizationClientFace
import Testing

/// `OptimizationClient.resolveOptimizedEntry` counts the variants it resolved by experience and
/// variant index (`optimization_variant_resolutions_total`), with the environment's metrics.
@Suite("OptimizationClient resolution metrics")
struct ClientResolutionMetricsTests {
    @Test func aResolutionThatMatchedASelectionIsCountedByExperienceAndVariantIndex() throws {
        let metrics = TestMetrics()
        var environment = OptimizationClient.Environment(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled)
        environment.metricsFactory = metrics
        let client = OptimizationClient(environment: environment)
        try client.initialize(config: OptimizationConfig(clientId: "test-client", channel: "server", defaults: try newVisitorDefaults()))
        defer { client.destroy() }
        let resolved = client.resolveOptimizedEntry(baseline: VisitorData.hero)
        _ = client.resolveOptimizedEntry(baseline: VisitorData.hero, selectedOptimizations: .empty)
        let experienceId = try #require(resolved.selectedOptimization?["experienceId"]?.stringValue)
        let index = try #require(resolved.selectedOptimization?["variantIndex"]?.intValue)
        let label = OptimizationTelemetry.Metric.variantResolutions
        #expect(metrics.counterTotal(label: label, dimensions: [("experience", experienceId), ("variant", String(index))]) == 1)
        #expect(metrics.counters.filter { $0.label == label }.count == 1, "nothing selected counts nothing")
    }
}
