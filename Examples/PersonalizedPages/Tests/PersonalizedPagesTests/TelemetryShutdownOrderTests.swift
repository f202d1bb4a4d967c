import Optimization
import OptimizationTesting
import PersonalizedPagesApp
import ServiceLifecycle
import Testing

/// The app's telemetry service is told to stop last: by then the HTTP server has finished and
/// the Optimization service has flushed its queued views, so the exporters' final flush carries
/// the spans and metrics of that flush.
@Suite(.hangBound) struct TelemetryShutdownOrderTests {
    /// Stands in for the exporters: waits for graceful shutdown, then records how many Insights
    /// events had reached the API by then.
    struct ShutdownProbe: Service {
        let server: LocalOptimizationAPIServer
        let seen: SendableRecorder<Int>

        func run() async throws {
            try? await gracefulShutdown()
            seen.append(server.insightsEvents.filter { $0["type"] == "component" }.count)
        }
    }

    @Test func theTelemetryServiceStopsAfterTheServiceFlushedItsViews() async throws {
        try await withLocalAPIServer { server in
            let seen = SendableRecorder<Int>()
            try await withApp(server, metricsRegistry: nil, telemetry: AppTelemetry(service: ShutdownProbe(server: server, seen: seen))) { listeners, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: listeners.baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(consent: true)])
                    let page = try await visitor.get("/")
                    #expect(page.status == 200)
                }
                #expect(server.insightsEvents.isEmpty, "the views are still queued")
            }
            #expect(seen.all == [3], "the three views were flushed before the telemetry service was told to stop")
        }
    }
}
