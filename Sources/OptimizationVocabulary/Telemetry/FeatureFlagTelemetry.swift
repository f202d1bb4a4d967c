import CoreMetrics
import Tracing

/// Reports flag evaluations: each one as an OpenTelemetry `feature_flag.evaluation` event on the
/// span the tracer reports active for the task's `ServiceContext.current` (nothing without one,
/// and nothing with a tracer that does not implement `Tracer.activeSpan(identifiedBy:)`), with
/// `feature_flag.key`, `feature_flag.result.variant`, `feature_flag.result.reason`,
/// `feature_flag.provider.name` and `error.type`; and counted on
/// `optimization_flag_evaluations_total` by key, variant and reason (``BoundedCounters``).
/// `feature_flag.context.id` is never recorded.
///
/// **Cost.** With the no-op tracer and the no-op metrics factory ``isRecording`` is false and the
/// faces build no ``FeatureFlagEvaluation`` at all. **Threading.** Thread-safe.
package final class FeatureFlagTelemetry: Sendable {
    private let tracer: any Tracer
    private let tracesEvents: Bool
    private let counters: BoundedCounters

    /// True when an evaluation is traced or counted; false when both go nowhere.
    package var isRecording: Bool { tracesEvents || counters.isRecording }

    /// - Parameters:
    ///   - tracer: whose active span receives the events (a `NoOpTracer` records nothing).
    ///   - metricsFactory: creates the evaluation counters.
    package init(tracer: any Tracer, metricsFactory: any MetricsFactory) {
        self.tracer = tracer
        tracesEvents = !(tracer is NoOpTracer)
        counters = BoundedCounters(
            label: OptimizationTelemetry.Metric.flagEvaluations, dimensionNames: ["key", "variant", "reason"], factory: metricsFactory)
    }

    /// Records one evaluation on the current span and counts it.
    package func record(_ evaluation: FeatureFlagEvaluation) {
        typealias Key = OptimizationTelemetry.Attribute
        if tracesEvents, let context = ServiceContext.current, let span = tracer.activeSpan(identifiedBy: context) {
            var attributes: SpanAttributes = [:]
            attributes[Key.featureFlagKey] = evaluation.key
            if let variant = evaluation.variant { attributes[Key.featureFlagResultVariant] = variant }
            attributes[Key.featureFlagResultReason] = evaluation.reason.rawValue
            attributes[Key.featureFlagProviderName] = OptimizationTelemetry.providerName
            if let errorType = evaluation.errorType { attributes[Key.errorType] = errorType }
            span.addEvent(SpanEvent(name: OptimizationTelemetry.featureFlagEvaluationEventName, attributes: attributes))
        }
        counters.increment([evaluation.key, evaluation.variant ?? "none", evaluation.reason.rawValue])
    }
}
