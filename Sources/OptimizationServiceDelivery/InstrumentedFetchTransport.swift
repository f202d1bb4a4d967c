import Tracing
import HostPlatform
import OptimizationDelivery
import OptimizationVocabulary
import OptimizationTransport

/// The service's transport with tracing and delivery metrics: one client span per Experience or
/// Insights HTTP request (`OptimizationTelemetry/experienceRequestSpanName`,
/// `OptimizationTelemetry/insightsRequestSpanName`), a child of the `ServiceContext` of the call
/// that caused it (a request call's `optimization.request` span, or `flush()`'s; timer flushes
/// start a root span), following OpenTelemetry's HTTP client conventions:
/// `http.request.method`, `url.template` (``APIRequestTarget``: no profile id, no query),
/// `server.address`, `server.port`, `http.response.status_code`, `http.request.resend_count`
/// (from `DeliveryAttempt`, on resends only), `error.type` on failure, and
/// `optimization.retry_after_ms` (a `Retry-After` in seconds, as milliseconds),
/// `optimization.api` and `optimization.outcome` (success, retry, drop, disable: the status's
/// `DeliveryOutcome.kind(ofStatus:)`; transport_error; cancelled: the request was cancelled
/// because its caller gave up);
/// and the Insights batch counters. With the default no-op tracer it costs one span object per
/// request and no attribute.
package struct InstrumentedFetchTransport: FetchTransport {
    package let inner: any FetchTransport
    package let tracer: any Tracer
    package let metrics: ServiceMetrics
    /// Requests whose URL starts with this go to the Insights API; all others to Experience.
    package let insightsBaseURL: String

    package init(inner: any FetchTransport, tracer: any Tracer, metrics: ServiceMetrics, insightsBaseURL: String) {
        self.inner = inner
        self.tracer = tracer
        self.metrics = metrics
        self.insightsBaseURL = insightsBaseURL
    }

    package func send(_ request: FetchRequest) async throws -> FetchResponse {
        typealias Key = OptimizationTelemetry.Attribute
        let isInsights = request.url.hasPrefix(insightsBaseURL)
        let span = tracer.startSpan(
            isInsights ? OptimizationTelemetry.insightsRequestSpanName : OptimizationTelemetry.experienceRequestSpanName, ofKind: .client)
        defer { span.end() }
        let recording = span.isRecording
        if recording {
            let target = APIRequestTarget(url: request.url)
            span.attributes[Key.httpRequestMethod] = request.method
            span.attributes[Key.api] = isInsights ? "insights" : "experience"
            span.attributes[Key.urlTemplate] = target.urlTemplate
            if let address = target.serverAddress { span.attributes[Key.serverAddress] = address }
            if let port = target.serverPort { span.attributes[Key.serverPort] = port }
            let resends = DeliveryAttempt.resendCount
            if resends > 0 { span.attributes[Key.httpRequestResendCount] = resends }
        }
        do {
            let response = try await inner.send(request)
            let outcome = DeliveryOutcome.kind(ofStatus: response.status)
            if recording {
                span.attributes[Key.httpResponseStatusCode] = response.status
                span.attributes[Key.outcome] = outcome
                if let retryAfter = Self.retryAfterMilliseconds(response.headers) { span.attributes[Key.retryAfterMilliseconds] = retryAfter }
                if outcome != "success" {
                    span.attributes[Key.errorType] = String(response.status)
                    span.setStatus(SpanStatus(code: .error))
                }
            }
            if isInsights {
                metrics.insightsBatch(outcome == "success" ? "sent" : outcome == "retry" ? "retried" : "dropped")
            }
            return response
        } catch {
            if Self.isCancellation(error) {
                // The caller gave up (an Experience budget ran out, an engine closed): the
                // request was cancelled on purpose, not failed.
                span.attributes[Key.outcome] = "cancelled"
            } else {
                span.attributes[Key.outcome] = "transport_error"
                span.attributes[Key.errorType] = "transport_error"
                span.recordError(error)
                span.setStatus(SpanStatus(code: .error))
            }
            if isInsights { metrics.insightsBatch("retried") }
            throw error
        }
    }

    /// True when `error` reports that the calling task was cancelled.
    package static func isCancellation(_ error: any Error) -> Bool {
        error is CancellationError || (error as? HTTPTransportError) == .cancelled
    }

    /// A `Retry-After` header (any case) in delta-seconds, as milliseconds; nil without one or
    /// for an HTTP date.
    static func retryAfterMilliseconds(_ headers: [String: String]) -> Int? {
        for (name, value) in headers where name.lowercased() == "retry-after" {
            guard let seconds = Int(value.filter { $0 != " " && $0 != "\t" }), seconds >= 0 else { return nil }
            return seconds.multipliedReportingOverflow(by: 1000).overflow ? Int.max : seconds * 1000
        }
        return nil
    }
}
