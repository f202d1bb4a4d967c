import HTTPTypes
import Hummingbird
import Instrumentation
import Tracing

/// A server span per request, named by its route and continuing a caller's W3C `traceparent`,
/// that records nothing about the visitor: the method, the route and the status only.
///
/// Hummingbird's `TracingMiddleware` also records the query, the `User-Agent` and the visitor's
/// address (`net.sock.peer.addr`), which would leave the process with every exported trace; this
/// middleware is its replacement for a service whose traces must not carry visitor data.
/// Stateless; `Sendable`. The span ends when the handler returns or throws (before the body is
/// written); a thrown 5xx or other error marks it as an error.
struct ServerSpanMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var parent = ServiceContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &parent, using: HTTPFieldsExtractor())
        return try await withSpan("HTTP \(request.method.rawValue) route not found", context: parent, ofKind: .server) { span in
            span.attributes["http.request.method"] = request.method.rawValue
            do {
                let response = try await next(request, context)
                Self.name(span, by: context)
                span.attributes["http.response.status_code"] = Int(response.status.code)
                return response
            } catch {
                Self.name(span, by: context)
                let status = (error as? any HTTPResponseError)?.status.code ?? 500
                span.attributes["http.response.status_code"] = status
                // withSpan records the error itself; a 4xx answer is not a failure of the server.
                if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
                throw error
            }
        }
    }

    /// The route the router matched (`/cms/{slug}`, never the request's path), once known.
    private static func name(_ span: any Span, by context: Context) {
        guard let route = context.endpointPath else { return }
        span.operationName = route
        span.attributes["http.route"] = route
    }
}

/// Reads W3C trace context (`traceparent`, `tracestate`) from a request's header fields.
private struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}
