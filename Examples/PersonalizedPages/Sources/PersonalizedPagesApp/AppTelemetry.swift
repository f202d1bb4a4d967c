import CoreMetrics
import ServiceLifecycle

/// Telemetry export run with the app (the `personalized-pages` executable builds it from the
/// `OTEL_*` environment with swift-otel; a test may pass its own): the exporters' background
/// service and, optionally, a metrics backend the app records into beside its Prometheus
/// registry.
///
/// ``PersonalizedPagesApp/makeServiceGroup(gracefulShutdownSignals:onListening:onMetricsListening:)``
/// puts ``service`` first in the group, so on graceful shutdown it is told to stop last: after
/// the HTTP server finished its requests and the Optimization service flushed its queues, so the
/// spans and metrics of that final flush are exported too.
public struct AppTelemetry: Sendable {
    /// The exporters' service (batch span processor, periodic metrics reader, their exporters):
    /// flushes and stops on graceful shutdown.
    public var service: any Service
    /// Where the app's metrics go as well as the Prometheus registry; nil: Prometheus only.
    public var metricsFactory: (any MetricsFactory)?

    /// Creates the telemetry with its service and, optionally, a metrics backend.
    public init(service: any Service, metricsFactory: (any MetricsFactory)? = nil) {
        self.service = service
        self.metricsFactory = metricsFactory
    }
}
