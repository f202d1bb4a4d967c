import CoreMetrics
import OptimizationJSON

/// Counts resolutions that matched a selected experience on
/// `optimization_variant_resolutions_total`, by `experience` (the experience id of the prepared
/// entry's matched selection) and `variant` (its variant index, `0` the baseline), at most
/// `OptimizationTelemetry/maximumLabelSets` sets (``BoundedCounters``). Never a visitor value.
///
/// **Cost.** With the no-op factory ``isRecording`` is false: check it before reading the
/// selection, so the resolve path pays one load. **Threading.** Thread-safe.
package final class VariantResolutionCounter: Sendable {
    private let counters: BoundedCounters

    /// False for the no-op factory: nothing is counted.
    package let isRecording: Bool

    /// - Parameter factory: creates the counters.
    package init(factory: any MetricsFactory) {
        counters = BoundedCounters(
            label: OptimizationTelemetry.Metric.variantResolutions, dimensionNames: ["experience", "variant"], factory: factory)
        isRecording = counters.isRecording
    }

    /// Counts one resolution that matched `selection` (`ResolvedOptimizedEntry.selectedOptimization`,
    /// `{experienceId, variantIndex}`); a selection without an experience id counts nothing.
    package func record(selection: JSONValue) {
        guard isRecording, let experienceId = selection["experienceId"]?.stringValue else { return }
        counters.increment([experienceId, String(selection["variantIndex"]?.intValue ?? 0)])
    }
}
