import HTTPTypes
import Hummingbird
import Optimization
import ServiceLifecycle

/// `GET /floor`: the plain page plus the HTTP exchanges a personalized page makes, written by
/// hand with no engine and no JavaScript: the floor `scripts/load-test` measures the
/// personalized page against (`c_cpu_over_f`).
///
/// Per request it sends the captured Experience request (``FloorExchange/Captured/experience``)
/// with the app's HTTP client, reads the answer's selections (`data.experiences`, or v2's
/// `data.selectedOptimizations`) with the library's JSON reader, counts three events (the personalized page's three views) and, once per
/// ``FloorExchange/Captured/insightsEventCount`` events (at least one batch per 25 events), sends
/// the captured Insights batch in the background, as the service's queue would. Answers 503
/// until the service has made both exchanges once (the load test's first personalized page).
struct FloorRoute: Sendable {
    let exchange: FloorExchange
    let content: PageContent
    let strictConsent: Bool

    /// The events a personalized page of the example sends (one view per entry).
    static let eventsPerPage = 3
    /// The response field carrying the number of selections the Experience answer held (-1:
    /// none could be read).
    static let selectionsField = HTTPField.Name("x-floor-selections")!

    func register(on router: Router<PageRoutes.Context>) {
        router.get("/floor") { _, context in
            guard let captured = exchange.captured else {
                return Response(status: .serviceUnavailable, body: .init(byteBuffer: ByteBuffer(string: "no exchange captured yet: request / first\n")))
            }
            let answer = try await exchange.transport.send(captured.experience)
            // API v1 names the selections `experiences`, v2 `selectedOptimizations`.
            let data = (try? JSONValue(jsonText: answer.body))?["data"]
            let selections = (data?["experiences"] ?? data?["selectedOptimizations"]).flatMap { try? SelectedOptimizations(json: $0) }
            let batchSize = min(25, max(1, captured.insightsEventCount))
            if exchange.countEvents(Self.eventsPerPage, batchSize: batchSize) {
                let transport = exchange.transport
                Task { _ = try? await transport.send(captured.insights) }
            }
            var response = html(PageRenderer.page(
                sections: content.entries.map(PageRenderer.Section.init(baseline:)),
                options: .init(consent: context.optimization.visitorState.consent, mode: "floor", strictConsent: strictConsent)))
            // What the answer selected, so that a test sees it was read (the page shows baselines).
            response.headers[Self.selectionsField] = "\(selections?.selections.count ?? -1)"
            return response
        }
    }
}

/// Keeps the app's HTTP transport open until graceful shutdown, then shuts it down. First in the
/// service group, so it closes after the Optimization service has flushed through it.
struct TransportLifetime: Service {
    let transport: HTTPFetchTransport

    func run() async throws {
        try? await gracefulShutdown()
        try? await transport.shutdown()
    }
}
