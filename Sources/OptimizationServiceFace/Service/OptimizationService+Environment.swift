import OptimizationServiceDelivery
import OptimizationVocabulary
import OptimizationDelivery
import CoreMetrics
import Foundation
import JavaScriptHost
import Logging
import OrderedCollections
import Synchronization
import Tracing
import HostPlatform
import OptimizationJSON
import OptimizationContent
import OptimizationTransport
import OptimizationEngine

extension OptimizationService {
    /// Host-side dependencies of a service.
    public struct Environment: Sendable {
        /// Receives the service's diagnostics and the shared core's log output. Visitor data is
        /// only ever logged at `debug`.
        public var logger: Logger
        /// Drives every timer: Experience budgets, Insights flush intervals, backoff, circuits.
        public var clock: any HostClock
        /// Carries every HTTP request. Nil (the default): ``start(timeout:)`` creates one
        /// `HTTPFetchTransport` limited to the configured base URLs, shared by all engines
        /// (one bounded connection pool), and ``shutdown()`` shuts it down.
        public var transport: (any FetchTransport)?
        /// Longest time one call into JavaScript may run.
        public var executionTimeLimit: Duration?
        /// Receives the service's metrics (“Observability” (Optimization’s documentation) lists them). Nil: the process-wide
        /// `MetricsSystem.factory` (no-op unless the application bootstraps a backend).
        public var metricsFactory: (any MetricsFactory)?
        /// Traces every request call (`OptimizationTelemetry/requestSpanName`), Experience and
        /// Insights request, and records flag evaluations on the current span (the article
        /// “Observability” lists the names). Nil: `InstrumentationSystem.tracer` (no-op unless
        /// the application bootstraps one).
        public var tracer: (any Tracer)?
        /// For tests: the scripts the engines load instead of the embedded JSRuntime.
        var scripts: [EmbeddedScript]?

        /// Creates an environment.
        /// - Parameters:
        ///   - logger: receives diagnostics and the core's log output; default a no-op logger.
        ///   - clock: drives every timer; default `SystemClock` (wall-clock time).
        ///   - transport: carries every HTTP request; nil (the default) lets ``OptimizationService/start(timeout:)``
        ///     create one shared `HTTPFetchTransport` limited to the configured base URLs.
        ///   - executionTimeLimit: longest time one call into JavaScript may run;
        ///     default 10, nil for no limit.
        ///   - metricsFactory: receives the service's metrics; nil (the default) uses
        ///     `MetricsSystem.factory`.
        ///   - tracer: traces Experience and Insights requests; nil (the default) uses
        ///     `InstrumentationSystem.tracer`.
        public init(
            logger: Logger = Logger(label: "Optimization", factory: { _ in SwiftLogNoOpLogHandler() }),
            clock: any HostClock = SystemClock(),
            transport: (any FetchTransport)? = nil,
            executionTimeLimit: Duration? = .seconds(10),
            metricsFactory: (any MetricsFactory)? = nil,
            tracer: (any Tracer)? = nil
        ) {
            self.logger = logger
            self.clock = clock
            self.transport = transport
            self.executionTimeLimit = executionTimeLimit
            self.metricsFactory = metricsFactory
            self.tracer = tracer
        }
    }
}
