import Logging
import Testing

@testable import personalized_pages

/// The executable's OpenTelemetry switch and what it logs about it: off without
/// `OTEL_EXPORTER_OTLP_ENDPOINT`, the start-up line naming where each signal goes without
/// credentials, and swift-otel's own configuration logs with header values and endpoint user
/// info redacted.
@Suite(.hangBound) struct OTLPExportSettingsTests {
    @Test func exportIsOffWithoutAnEndpointOrWhenTheSDKIsDisabled() throws {
        #expect(!OTLPExport.isEnabled(environment: [:]))
        #expect(!OTLPExport.isEnabled(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": ""]))
        #expect(!OTLPExport.isEnabled(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "TRUE"]))
        #expect(OTLPExport.isEnabled(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"]))
        #expect(OTLPExport.summary(environment: [:]) == "OTLP export off (set OTEL_EXPORTER_OTLP_ENDPOINT to export traces and metrics over OTLP/HTTP)")
        #expect(OTLPExport.summary(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"]) == "OTLP export off (OTEL_SDK_DISABLED=true)")
        // Without an endpoint nothing is bootstrapped (the process-global systems stay untouched).
        let telemetry = try OTLPExport.bootstrap(environment: [:], logger: Logger(label: "t"))
        #expect(telemetry == nil)
    }

    @Test func theStartUpLineNamesEachSignalsTargetWithoutCredentials() {
        let line = OTLPExport.summary(environment: [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:secret@collector.example:4318/base/?token=abc#x",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://metrics.example:9090/otlp",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json",
            "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer abc",
            "OTEL_SERVICE_NAME": "shop",
        ])
        #expect(line == "OTLP export on: traces to https://collector.example:4318/base/v1/traces (http/json), metrics to http://metrics.example:9090/otlp (http/protobuf); headers from OTEL_EXPORTER_OTLP_HEADERS (values not shown); service.name shop")
        #expect(!line.contains("secret") && !line.contains("abc"))
        let noTraces = OTLPExport.summary(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"])
        #expect(noTraces == "OTLP export on: traces to nowhere (OTEL_TRACES_EXPORTER=none), metrics to http://c:4318/v1/metrics (http/protobuf); service.name personalized-pages")
        #expect(OTLPExport.redacted("not a url") == "<not a URL>")
    }

    @Test func swiftOTelsConfigurationLogsKeepNoCredential() {
        let headers = OTLPDiagnosticLogHandler.redacted([
            "environment_key": "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "environment_value": "authorization=Bearer abc",
            "new_value": "authorization=Bearer abc", "previous_value": "", "component": "makeTracingBackend",
        ])
        #expect(headers["environment_value"] == "<redacted>" && headers["new_value"] == "<redacted>" && headers["previous_value"] == "<redacted>")
        #expect(headers["component"] == "makeTracingBackend")
        let endpoint = OTLPDiagnosticLogHandler.redacted([
            "environment_key": "OTEL_EXPORTER_OTLP_ENDPOINT", "environment_value": "http://u:p@c:4318/?k=v", "previous_value": "http://localhost:4318",
        ])
        #expect(endpoint["environment_value"] == "http://c:4318/")
        #expect(endpoint["previous_value"] == "http://localhost:4318")
        let other: Logger.Metadata = ["environment_key": "OTEL_BSP_SCHEDULE_DELAY", "environment_value": "5000"]
        #expect(OTLPDiagnosticLogHandler.redacted(other) == other)
    }
}
