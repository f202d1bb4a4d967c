import Tracing
import HostPlatform
import OptimizationTransport

/// The service's transport with tracing and delivery metrics: one client span per Experience or
/// Insights HTTP request (`Experience API request` / `Insights API request`), a child of the
/// `ServiceContext` of the call that caused it (an event call's request, or `flush()`; timer
/// flushes start a root span), with `http.request.method`, `http.response.status_code`,
/// `optimization.api` and `optimization.outcome` (success, retry, drop, disable, transport_error,
/// cancelled: the request was cancelled because its caller gave up);
/// and the Insights batch counters. With the default no-op tracer it costs one span object per
/// request.
package struct InstrumentedFetchTransport: FetchTransport {
    package let inner: any FetchTransport
    package let tracer: any Tracer
    package let metrics: ServiceMetrics
    /// Requests whose URL starts with this go to the Insights API; all others to Experience.
    package let insightsBaseURL: String
    /// The shared core's outcome of each status.
    package let statusKinds: DeliveryStatusKinds

    package init(
        inner: any FetchTransport, tracer: any Tracer, metrics: ServiceMetrics, insightsBaseURL: String, statusKinds: DeliveryStatusKinds
    ) {
        self.inner = inner
        self.tracer = tracer
        self.metrics = metrics
        self.insightsBaseURL = insightsBaseURL
        self.statusKinds = statusKinds
    }

    package func send(_ request: FetchRequest) async throws -> FetchResponse {
        let isInsights = request.url.hasPrefix(insightsBaseURL)
        let span = tracer.startSpan(isInsights ? "Insights API request" : "Experience API request", ofKind: .client)
        defer { span.end() }
        span.attributes["http.request.method"] = request.method
        span.attributes["optimization.api"] = isInsights ? "insights" : "experience"
        do {
            let response = try await inner.send(request)
            let outcome = statusKinds.kind(of: response.status)
            span.attributes["http.response.status_code"] = response.status
            span.attributes["optimization.outcome"] = outcome
            if outcome != "success" { span.setStatus(SpanStatus(code: .error)) }
            if isInsights {
                metrics.insightsBatch(outcome == "success" ? "sent" : outcome == "retry" ? "retried" : "dropped")
            }
            return response
        } catch {
            if Self.isCancellation(error) {
                // The caller gave up (an Experience budget ran out, an engine closed): the
                // request was cancelled on purpose, not failed.
                span.attributes["optimization.outcome"] = "cancelled"
            } else {
                span.attributes["optimization.outcome"] = "transport_error"
                span.recordError(error)
                span.setStatus(SpanStatus(code: .error))
            }
            if isInsights { metrics.insightsBatch("retried") }
            throw error
        }
    }

    /// True when `error` reports that the calling task was cancelled.
    package static func isCancellation(_ error: any Error) -> Bool {
        error is CancellationError || (error as? DeliveryError) == .cancelled
    }

}
