import Hummingbird
import Prometheus

/// `GET /metrics` of the metrics listener (never the public one): every metric in the Prometheus
/// registry (the library's `optimization_…` and the PostgreSQL integration's
/// `optimization_postgres_…`), in Prometheus' text format.
struct MetricsRoute: Sendable {
    let registry: PrometheusCollectorRegistry

    func register(on router: Router<BasicRequestContext>) {
        router.get("/metrics") { _, _ in
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: buffer)))
        }
    }
}
