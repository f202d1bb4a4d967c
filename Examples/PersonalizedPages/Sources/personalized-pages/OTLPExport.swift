import Foundation
import Logging
import Metrics
import OTel
import PersonalizedPagesApp
import ServiceLifecycle
import Tracing

/// OpenTelemetry export of the process's traces and metrics over OTLP/HTTP (swift-otel), set by
/// the standard `OTEL_*` environment variables and off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is
/// set (and `OTEL_SDK_DISABLED` is not `true`).
///
/// When on, ``bootstrap(environment:logger:)`` bootstraps the process's `InstrumentationSystem`
/// with swift-otel's tracer (the Optimization service's spans and their events go there) and
/// returns swift-otel's metrics factory for the app to record into beside Prometheus (which
/// `GET /metrics` keeps serving). Every other setting is swift-otel's own reading of the
/// environment: `OTEL_SERVICE_NAME` (default `personalized-pages`), `OTEL_RESOURCE_ATTRIBUTES`,
/// `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT`,
/// `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf` by default, or `http/json`; gRPC is not built
/// in), `OTEL_TRACES_SAMPLER`, `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_METRIC_EXPORT_INTERVAL`, ….
/// Logs stay on stderr and are not exported.
///
/// Bootstrapping is process-global: call it once per process.
enum OTLPExport {
    /// The default service name (`OTEL_SERVICE_NAME` overrides it).
    static let serviceName = "personalized-pages"

    /// Whether the environment turns export on: `OTEL_EXPORTER_OTLP_ENDPOINT` set and not empty,
    /// and `OTEL_SDK_DISABLED` not `true`.
    static func isEnabled(environment: [String: String]) -> Bool {
        guard let endpoint = environment["OTEL_EXPORTER_OTLP_ENDPOINT"], !endpoint.isEmpty else { return false }
        return environment["OTEL_SDK_DISABLED"]?.lowercased() != "true"
    }

    /// The start-up log line: whether OTLP export is on and, when it is, where each signal goes.
    /// Endpoints are shown without user info, query or fragment, and headers only by count, so
    /// no credential is logged.
    static func summary(environment: [String: String]) -> String {
        guard isEnabled(environment: environment) else {
            if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" {
                return "OTLP export off (OTEL_SDK_DISABLED=true)"
            }
            return "OTLP export off (set OTEL_EXPORTER_OTLP_ENDPOINT to export traces and metrics over OTLP/HTTP)"
        }
        let traces = signalTarget("traces", environment: environment)
        let metrics = signalTarget("metrics", environment: environment)
        var line = "OTLP export on: traces to \(traces), metrics to \(metrics)"
        let headers = ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS"]
            .filter { !(environment[$0] ?? "").isEmpty }
        if !headers.isEmpty { line += "; headers from \(headers.joined(separator: ", ")) (values not shown)" }
        line += "; service.name \(environment["OTEL_SERVICE_NAME"].flatMap { $0.isEmpty ? nil : $0 } ?? serviceName)"
        return line
    }

    /// Where one signal goes, as OTLP/HTTP builds it: the signal's own endpoint as given, or the
    /// shared one with `/v1/<signal>` appended; with its protocol, or `off` when the signal's
    /// exporter is `none`.
    private static func signalTarget(_ signal: String, environment: [String: String]) -> String {
        let upper = signal.uppercased()
        if environment["OTEL_\(upper)_EXPORTER"]?.lowercased() == "none" { return "nowhere (OTEL_\(upper)_EXPORTER=none)" }
        let url: String
        if let own = environment["OTEL_EXPORTER_OTLP_\(upper)_ENDPOINT"], !own.isEmpty {
            url = redacted(own)
        } else {
            let shared = redacted(environment["OTEL_EXPORTER_OTLP_ENDPOINT"] ?? "")
            url = shared == notAURL ? shared : (shared.hasSuffix("/") ? shared : shared + "/") + "v1/\(signal)"
        }
        let protocolName = environment["OTEL_EXPORTER_OTLP_\(upper)_PROTOCOL"] ?? environment["OTEL_EXPORTER_OTLP_PROTOCOL"] ?? "http/protobuf"
        return "\(url) (\(protocolName))"
    }

    /// What ``redacted(_:)`` shows for a value that is not a URL.
    static let notAURL = "<not a URL>"

    /// `url` without user info, query and fragment; a value that is no URL is not shown.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.scheme != nil, components.host != nil else {
            return notAURL
        }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? notAURL
    }

    /// Bootstraps tracing (process-global) and creates the metrics backend when the environment
    /// turns export on; nil when it is off.
    /// - Parameters:
    ///   - environment: decides whether export is on; swift-otel reads the process environment
    ///     for every other setting.
    ///   - logger: receives swift-otel's diagnostics (failed exports, …).
    /// - Throws: swift-otel's configuration error for a setting it cannot honour (the `grpc`
    ///   protocol, which this build leaves out; an invalid endpoint or certificate).
    static func bootstrap(environment: [String: String], logger: Logger) throws -> AppTelemetry? {
        guard isEnabled(environment: environment) else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = serviceName
        // swift-otel logs each OTEL_* value it applies (at info): header values (credentials) and
        // endpoints' user info never reach the log (OTLPDiagnosticLogHandler); warnings and errors
        // only, unless OTEL_LOG_LEVEL says otherwise.
        configuration.diagnosticLogger = .custom(Logger(label: logger.label, factory: { _ in OTLPDiagnosticLogHandler(wrapping: logger.handler) }))
        configuration.diagnosticLogLevel = .warning
        configuration.logs.enabled = false
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.metrics.otlpExporter.protocol = .httpProtobuf
        let tracing = try OTel.makeTracingBackend(configuration: configuration)
        let metrics = try OTel.makeMetricsBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(tracing.factory)
        // The tracer's processor exports what the metrics reader's last tick ended, so it stops
        // after the metrics (a group shuts its services down in reverse order).
        let service = ServiceGroup(configuration: .init(
            services: [.init(service: tracing.service), .init(service: metrics.service)],
            logger: logger))
        return AppTelemetry(service: service, metricsFactory: metrics.factory)
    }
}

/// swift-otel's diagnostic log handler: forwards to the app's handler with the values of
/// configuration changes redacted. swift-otel logs `environment_key`, `environment_value`,
/// `previous_value` and `new_value` for every `OTEL_*` variable it applies: for a `…HEADERS`
/// variable the values are replaced by `<redacted>`, for an `…ENDPOINT` one they are shown
/// without user info, query and fragment (``OTLPExport/redacted(_:)``).
struct OTLPDiagnosticLogHandler: LogHandler {
    static let valueKeys = ["environment_value", "previous_value", "new_value"]

    var inner: any LogHandler

    init(wrapping inner: any LogHandler) {
        self.inner = inner
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        // swift-otel sets the keys on its logger (the handler's metadata) as well as on the
        // event: redact the two together, and hand the inner handler the result as its own.
        var handler = inner
        handler.metadata = Self.redacted(inner.metadata.merging(event.metadata ?? [:]) { $1 })
        var event = event
        event.metadata = nil
        handler.log(event: event)
    }

    /// `metadata` with the values of a header or endpoint variable redacted.
    static func redacted(_ metadata: Logger.Metadata) -> Logger.Metadata {
        guard let key = metadata["environment_key"].map({ "\($0)".uppercased() }) else { return metadata }
        var metadata = metadata
        for valueKey in valueKeys {
            guard let value = metadata[valueKey] else { continue }
            if key.contains("HEADERS") {
                metadata[valueKey] = "<redacted>"
            } else if key.contains("ENDPOINT") {
                let text = "\(value)"
                metadata[valueKey] = .string(text.isEmpty ? text : OTLPExport.redacted(text))
            }
        }
        return metadata
    }
}
