import AsyncHTTPClient
import Foundation
import NIOCore
import Optimization
import OptimizationTesting
import Testing

/// OpenTelemetry export end to end: the real `personalized-pages` executable, run as a child
/// process with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at the test kit's `LocalOTLPReceiver`,
/// serves a personalized page and an OFREP flag and is shut down with SIGTERM; the receiver
/// decodes what the swift-otel exporters sent (OTLP/HTTP, protobuf).
///
/// The batch span processor's delay and the metrics interval are set to ten minutes, so nothing is
/// exported before shutdown: every span the receiver sees came from the exporters' final flush,
/// and the spans of the Insights views the Optimization service flushed at shutdown arriving
/// prove the exporters stopped after the service.
@Suite(.hangBound) struct OTLPExportTests {
    static let ofrepToken = "otlp-export-test-ofrep-token-0123456789"
    static let collectorToken = "collector-token-never-logged-5f3a"

    @Test func aPersonalizedRequestIsExportedAsOneTraceAndFlushedAfterTheService() async throws {
        let executable = GracefulShutdownTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the package first: \(executable.path)")
        let receiver = LocalOTLPReceiver()
        try await receiver.start()
        defer { Task { try? await receiver.stop() } }
        try await withLocalAPIServer { server in
            let process = Process()
            process.executableURL = executable
            process.arguments = [
                "--port", "0", "--engines", "1", "--client-id", "otlp-test",
                "--experience-base-url", server.experienceBaseURL, "--insights-base-url", server.insightsBaseURL,
                "--log-level", "notice",
            ]
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("OTEL_") }
            environment["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
            environment["OTEL_BSP_SCHEDULE_DELAY"] = "600000"
            environment["OTEL_METRIC_EXPORT_INTERVAL"] = "600000"
            // A credential header, with swift-otel's diagnostics at info (it logs every OTEL_*
            // value it applies): the value must not reach the log.
            environment["OTEL_EXPORTER_OTLP_HEADERS"] = "x-collector-token=\(Self.collectorToken)"
            environment["OTEL_LOG_LEVEL"] = "info"
            environment["PP_VISITOR_STATE_KEYS"] = TestVisitorState.key
            environment["PP_OFREP_TOKENS"] = Self.ofrepToken
            environment["PP_OFREP_TRUSTS_PROFILE_IDS"] = "1"
            process.environment = environment
            let stdout = Pipe()
            let stderr = Pipe()
            process.standardOutput = stdout
            process.standardError = stderr
            let exited = AsyncStream<Int32>.makeStream()
            process.terminationHandler = { exited.continuation.yield($0.terminationStatus); exited.continuation.finish() }
            try process.run()
            defer { if process.isRunning { process.terminate() } }
            let errors = Task { stderr.fileHandleForReading.readDataToEndOfFile() }

            let port = try await GracefulShutdownTests.listeningPort(stdout.fileHandleForReading)
            let baseURL = "http://127.0.0.1:\(port)"
            let profileId = try await withHTTPClient { client in
                var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(consent: true)])
                let page = try await visitor.get("/?debug=0")
                #expect(page.status == 200)
                let profileId = try #require(TestVisitorState.open(visitor.cookies["pp_state"])?.profileId)
                let flag = try await HTTPExchange.send(
                    client, .POST, baseURL + "/ofrep/v1/evaluate/flags/free-shipping-threshold",
                    headers: [("Authorization", "Bearer \(Self.ofrepToken)"), ("Content-Type", "application/json")],
                    body: #"{"context":{"targetingKey":"otlp-visitor-1"}}"#)
                #expect(flag.status == 200)
                return profileId
            }
            #expect(receiver.traceExports.isEmpty, "nothing is exported before shutdown (ten-minute batch delay)")

            process.terminate()  // SIGTERM
            let status = try await GracefulShutdownTests.withHangBound { await exited.stream.first { _ in true } }
            #expect(status == 0)
            let log = String(decoding: await errors.value, as: UTF8.self)

            let views = server.insightsEvents.filter { $0["type"] == "component" }.count
            try Self.checkExport(receiver: receiver, log: log, profileId: profileId, deliveredViews: views)
        }
    }

    /// What the receiver got from the process whose stderr is `log`: the page's and the OFREP
    /// route's traces, the Insights request of the shutdown flush and the metrics.
    static func checkExport(receiver: LocalOTLPReceiver, log: String, profileId: String, deliveredViews: Int) throws {
        #expect(log.contains("OTLP export on: traces to \(receiver.endpoint)/v1/traces (http/protobuf), metrics to \(receiver.endpoint)/v1/metrics (http/protobuf)"), "\(log)")
        #expect(log.contains("environment_key=OTEL_EXPORTER_OTLP_TRACES_HEADERS environment_value=<redacted>"), "\(log)")
        #expect(!log.contains(collectorToken))
        let spans = receiver.spans
        if let dump = ProcessInfo.processInfo.environment["OTLP_TRACE_DUMP"] {
            try Self.describe(spans).write(toFile: dump, atomically: true, encoding: .utf8)
        }
        #expect(receiver.decodingErrors.isEmpty)
        #expect(receiver.refusedRequests.isEmpty)
        #expect(spans.allSatisfy { $0.resourceAttributes["service.name"] == .string("personalized-pages") })

        // GET /: the server span, the library's request span of page() under it, the
        // Experience call under that, all in one trace.
        let pageSpan = try #require(spans.first { $0.kind == .server && $0.attributes["http.route"] == .string("/") }, "\(Self.describe(spans))")
        #expect(pageSpan.parentSpanID == nil)
        let requestSpan = try #require(
            spans.first {
                $0.name == OptimizationTelemetry.requestSpanName && $0.parentSpanID == pageSpan.spanID
                    && $0.attributes[OptimizationTelemetry.Attribute.requestMethod] == .string("page")
            },
            "\(Self.describe(spans))")
        #expect(requestSpan.traceID == pageSpan.traceID)
        let experience = try #require(
            spans.first { $0.name == OptimizationTelemetry.experienceRequestSpanName && $0.parentSpanID == requestSpan.spanID },
            "\(Self.describe(spans))")
        #expect(experience.kind == .client)
        #expect(experience.traceID == pageSpan.traceID)
        #expect(experience.attributes[OptimizationTelemetry.Attribute.api] == .string("experience"))
        #expect(experience.attributes[OptimizationTelemetry.Attribute.httpResponseStatusCode] == .int(200))
        // The page's three views went together: one request span of the same trace, for three calls.
        let views = spans.filter { $0.parentSpanID == pageSpan.spanID && $0.attributes[OptimizationTelemetry.Attribute.requestMethod] == .string("trackView") }
        #expect(views.count == 1, "\(Self.describe(spans))")
        #expect(views.first?.attributes[OptimizationTelemetry.Attribute.callCount] == .int(3))
        #expect(views.first?.attributes[OptimizationTelemetry.Attribute.outcome] == .string("accepted"))

        // The OFREP route: its server span, the preflight's Experience call in its trace, and
        // the flag's feature_flag.evaluation event on it, without the visitor.
        let flagSpan = try #require(
            spans.first { $0.kind == .server && $0.attributes["http.route"] == .string("/ofrep/v1/evaluate/flags/{key}") }, "\(Self.describe(spans))")
        #expect(spans.contains { $0.name == OptimizationTelemetry.experienceRequestSpanName && Self.ancestors(of: $0, in: spans).contains(flagSpan.spanID) })
        let event = try #require(flagSpan.events.first { $0.name == OptimizationTelemetry.featureFlagEvaluationEventName }, "\(Self.describe(spans))")
        #expect(event.attributes[OptimizationTelemetry.Attribute.featureFlagKey] == .string("free-shipping-threshold"))
        #expect(event.attributes[OptimizationTelemetry.Attribute.featureFlagProviderName] == .string(OptimizationTelemetry.providerName))
        #expect(event.attributes[OptimizationTelemetry.Attribute.featureFlagResultReason] == .string("targeting_match"))
        #expect(event.attributes[OptimizationTelemetry.Attribute.featureFlagContextId] == nil)
        // No exported span names the visitor: not the routes', not the library's, and none of
        // AsyncHTTPClient's own (the library's transport makes none: they would record each
        // request's full URL, profile id included).
        // Nor the visitor's browser or query (the harness's User-Agent, `?debug=0`); the server
        // spans carry the method, the route and the status only (no address either; the client
        // spans' `server.address` is the API's).
        let naming = spans.filter { Self.mentions($0, "otlp-visitor-1", profileId, "personalized-pages-tests", "debug=") }
        #expect(naming.isEmpty, "\(Self.describe(naming))")
        for span in spans where span.kind == .server {
            #expect(Set(span.attributes.map(\.key)).isSubset(of: ["http.request.method", "http.route", "http.response.status_code"]), "\(Self.describe([span]))")
        }
        #expect(spans.allSatisfy(Self.isTheAppsOrTheLibrarys), "\(Self.describe(spans.filter { !Self.isTheAppsOrTheLibrarys($0) }))")

        // The views flushed at shutdown: their Insights request was traced, then exported.
        #expect(deliveredViews == 3)
        #expect(spans.contains { $0.name == OptimizationTelemetry.insightsRequestSpanName && $0.attributes[OptimizationTelemetry.Attribute.outcome] == .string("success") })

        // Metrics: the final reading at shutdown carries the library's metrics.
        let metricNames = try receiver.metricsExports.flatMap(OTLPTraceExport.metricNames(fromExportRequest:))
        #expect(metricNames.contains("optimization_experience_requests_total"), "\(metricNames)")
    }

    /// True for the routes' server spans and the library's spans.
    static func isTheAppsOrTheLibrarys(_ span: OTLPSpan) -> Bool {
        if case .server = span.kind { return true }
        return [OptimizationTelemetry.requestSpanName, OptimizationTelemetry.experienceRequestSpanName, OptimizationTelemetry.insightsRequestSpanName]
            .contains(span.name)
    }

    /// True when an attribute of `span` or of one of its events holds one of `texts`.
    static func mentions(_ span: OTLPSpan, _ texts: String...) -> Bool {
        let values = (span.attributes + span.events.flatMap(\.attributes)).map(\.value.description)
        return values.contains { value in texts.contains { value.contains($0) } }
    }

    /// The span ids of `span`'s parent, its parent's parent, … as far as `spans` holds them.
    static func ancestors(of span: OTLPSpan, in spans: [OTLPSpan]) -> [String] {
        var chain: [String] = []
        var parent = span.parentSpanID
        while let id = parent, !chain.contains(id) {
            chain.append(id)
            parent = spans.first { $0.spanID == id && $0.traceID == span.traceID }?.parentSpanID
        }
        return chain
    }

    /// One line per span: name, kind, ids, parent, attributes and events, in arrival order.
    static func describe(_ spans: [OTLPSpan]) -> String {
        spans.map { span in
            var line = "\(span.name) [\(span.kind)] trace=\(span.traceID) span=\(span.spanID) parent=\(span.parentSpanID ?? "-")"
            line += " " + span.attributes.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            for event in span.events {
                line += "\n    event \(event.name) " + event.attributes.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            }
            return line
        }.joined(separator: "\n")
    }
}
