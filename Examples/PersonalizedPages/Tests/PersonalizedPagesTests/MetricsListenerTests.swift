import AsyncHTTPClient
import Prometheus
import Testing

/// `/metrics` is served by the metrics listener only: the public listener answers 404.
@Suite(.hangBound) struct MetricsListenerTests {
    @Test func metricsAreServedOnTheMetricsListenerOnly() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server, metricsRegistry: PrometheusCollectorRegistry()) { listeners, _ in
                let metricsURL = try #require(listeners.metricsURL)
                try await withHTTPClient { client in
                    #expect(try await HTTPExchange.send(client, .GET, listeners.baseURL + "/", headers: [("Cookie", "pp_consent=yes")]).status == 200)
                    #expect(try await HTTPExchange.send(client, .GET, listeners.baseURL + "/metrics").status == 404)
                    let metrics = try await HTTPExchange.send(client, .GET, metricsURL + "/metrics")
                    #expect(metrics.status == 200)
                    #expect(metrics.headers.first(name: "content-type") == "text/plain; version=0.0.4; charset=utf-8")
                    let text = String(buffer: metrics.body)
                    #expect(text.contains("# TYPE optimization_experience_requests_total counter"))
                    #expect(text.contains("optimization_resolves_total"))
                    // The metrics listener serves nothing else.
                    #expect(try await HTTPExchange.send(client, .GET, metricsURL + "/").status == 404)
                }
            }
        }
    }
}
