import CoreMetrics
import Synchronization

/// The counters of one labelled metric, created on first use per dimension set, at most
/// `OptimizationTelemetry/maximumLabelSets` of them: later sets are counted under one counter
/// whose every dimension is `_other`, so a metrics backend never sees unbounded series.
///
/// **Threading.** Thread-safe (one lock around the lookup). With the no-op factory
/// ``isRecording`` is false and ``increment(_:)`` returns at once.
package final class BoundedCounters: Sendable {
    /// The value of every dimension of the overflow counter.
    package static let overflowValue = "_other"

    /// False for the no-op factory: nothing is counted.
    package let isRecording: Bool
    private let label: String
    private let dimensionNames: [String]
    private let capacity: Int
    private let factory: any MetricsFactory
    private let counters = Mutex<[[String]: Counter]>([:])

    /// - Parameters:
    ///   - label: the metric's name.
    ///   - dimensionNames: the dimensions, in the order ``increment(_:)`` takes their values.
    ///   - capacity: the most distinct value sets (the overflow counter not included).
    ///   - factory: creates the counters.
    package init(label: String, dimensionNames: [String], capacity: Int = OptimizationTelemetry.maximumLabelSets, factory: any MetricsFactory) {
        self.label = label
        self.dimensionNames = dimensionNames
        self.capacity = capacity
        self.factory = factory
        isRecording = !(factory is NOOPMetricsHandler)
    }

    /// Counts one occurrence of `values` (one per dimension name, in order).
    package func increment(_ values: [String]) {
        guard isRecording else { return }
        let counter = counters.withLock { counters -> Counter in
            if let counter = counters[values] { return counter }
            let key = counters.count < capacity ? values : dimensionNames.map { _ in Self.overflowValue }
            if let counter = counters[key] { return counter }
            let counter = Counter(label: label, dimensions: Array(zip(dimensionNames, key)), factory: factory)
            counters[key] = counter
            return counter
        }
        counter.increment()
    }
}
