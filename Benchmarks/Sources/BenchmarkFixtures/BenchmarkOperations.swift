import Foundation
import JavaScriptHost
import Logging
import Optimization

/// The operations measured one at a time, each driven the same way by `optimization-bench
/// --operations-only` (the `op_*` figures) and by the harness's benchmarks
/// (`Benchmarks/OperationBenchmarks`, whose allocation counts are checked against `Thresholds/`).
public enum BenchmarkOperations {
    /// The variant the bench entry resolves to for the bench selections.
    public static let variantId = "4k6ZyFQnR2POY5IJLLlJRb"

    /// The bench selections (``BenchmarkFixture/selectionsJSON``: 20, one matching the entry).
    public static func selections() throws -> SelectedOptimizations {
        try SelectedOptimizations(jsonData: Array(BenchmarkFixture.selectionsJSON.utf8))
    }

    /// A client for the resolve operations: initialized, no transport, no storage, 1,000 prepared
    /// entries kept. Destroy it when done.
    public static func resolvingClient() throws -> OptimizationClient {
        let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
        try client.initialize(config: OptimizationConfig(clientId: "bench", entryCacheSize: 1000))
        return client
    }

    /// `count` revisions of the bench entry from `firstRevision` on: a new entry for the engine
    /// each, so resolving one is a cold resolve.
    public static func coldEntries(count: Int, firstRevision: Int) throws -> [ContentfulEntry] {
        try (0..<count).map { try ContentfulEntry(jsonText: BenchmarkFixture.entryJSON(revision: firstRevision + $0)) }
    }

    /// The service options of the service operations: one engine, one Insights queue, room for
    /// every event a run accepts.
    public static let serviceOptions = OptimizationService.Options(engines: 1, insightsMaxEvents: 1_000_000, deliveryShards: 1)

    /// `event_accept`: one service `trackClick` for one of 100 visitors, accepted into the
    /// Insights queue (which flushes to the loopback API server in the background).
    public static func acceptEvent(on service: OptimizationService, index: Int) async throws {
        let request = service.forRequest(RequestOptions(consent: true, profileId: "visitor-\(index % 100)"))
        _ = try await request.trackClick(TrackClickPayload(componentId: "hero", variantIndex: 1))
    }

    /// `experience_answer`: `forRequest` and one `page()` for one of 100 visitors: the request's
    /// engine builds the Experience call, the loopback API server answers it, the engine
    /// interprets the answer (profile, selections, changes).
    public static func answerExperience(on service: OptimizationService, index: Int) async throws {
        let request = service.forRequest(RequestOptions(consent: true, profileId: "visitor-\(index % 100)"))
        _ = try await request.page()
    }

    /// The request options of `request_track_view`: a consenting returning visitor (one of 100)
    /// with the event context a web request carries (`page` url and path, `userAgent`), as the
    /// Hummingbird and Vapor middlewares build it.
    public static func webRequestOptions(index: Int) -> RequestOptions {
        RequestOptions(
            visitorState: VisitorState(profileId: "visitor-\(index % 100)", consent: true), host: "127.0.0.1:8080", path: "/events",
            query: nil, acceptLanguage: "en-US,en;q=0.9", userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)")
    }

    /// `web_request_views`: what the example's events page asks of the service: `forRequest`
    /// for a web request (``webRequestOptions(index:)``) and three server-rendered views
    /// (duration 0, a fresh view id each), accepted into the Insights queue. Throws when a view
    /// is not accepted.
    public static func webRequestViews(on service: OptimizationService, index: Int) async throws {
        let request = service.forRequest(webRequestOptions(index: index))
        for entry in 0..<3 {
            let result = try await request.trackView(TrackViewPayload(
                componentId: "entry-\(entry)", viewId: "view-\(index)-\(entry)", experienceId: "experience-1", variantIndex: 1,
                viewDuration: .milliseconds(0)))
            guard result.outcome == .accepted else { throw ViewNotAccepted() }
        }
    }

    /// `web_request_views_together`: ``webRequestViews(on:index:)`` with the three views in one
    /// `trackViews` (one crossing into the engine), as the example's pages send them. Throws
    /// when a view is not accepted.
    public static func webRequestViewsTogether(on service: OptimizationService, index: Int) async throws {
        let request = service.forRequest(webRequestOptions(index: index))
        let results = await request.trackViews((0..<3).map { entry in
            TrackViewPayload(
                componentId: "entry-\(entry)", viewId: "view-\(index)-\(entry)", experienceId: "experience-1", variantIndex: 1,
                viewDuration: .milliseconds(0))
        })
        for result in results { guard try result.get().outcome == .accepted else { throw ViewNotAccepted() } }
    }

    /// A view of `web_request_views` was not accepted.
    public struct ViewNotAccepted: Error, CustomStringConvertible {
        public var description: String { "a view of web_request_views was not accepted" }
    }

    /// Three entries of a page, each a new revision (the resolves of ``personalizedRequest(on:page:index:)``).
    public static func pageEntries() throws -> [ContentfulEntry] {
        try coldEntries(count: 3, firstRevision: 900_000)
    }

    /// `personalized_request`: what a personalized page asks of the service: `forRequest`, one
    /// `page()` Experience call, three resolves and their three views (one `trackViews`, as the
    /// example's page sends them).
    public static func personalizedRequest(on service: OptimizationService, page: [ContentfulEntry], index: Int) async throws {
        let request = service.forRequest(RequestOptions(consent: true, profileId: "visitor-\(index % 100)"))
        _ = try await request.page()
        let views = page.map { baseline in
            let resolved = request.resolveOptimizedEntry(baseline: baseline)
            return TrackViewPayload(
                componentId: baseline.id, viewId: "view-\(index)", variantIndex: resolved.selectedOptimization?["variantIndex"]?.intValue ?? 0,
                viewDuration: .milliseconds(0))
        }
        for result in await request.trackViews(views) { _ = try result.get() }
    }

    /// The visitor-state codec of `visitor_state_open_seal`: a fixed 32-byte key, the cookie's
    /// lifetime, the system clock (as a service runs it).
    public static func visitorStateCodec() throws -> VisitorStateCodec {
        VisitorStateCodec(keys: try VisitorStateKeys([[UInt8](repeating: 0x5A, count: 32)]), lifetime: .seconds(VisitorCookies.maxAge))
    }

    /// The sealed state `visitor_state_open_seal` opens: a returning, consenting visitor with a
    /// profile id and the bench selections (about 2.5 KB sealed, under the cookie limit).
    public static func sealedVisitorState(_ codec: VisitorStateCodec) throws -> String {
        let state = VisitorState(profileId: "8c7f3b2e-4d1a-4f6b-9e2c-5a0d7b3c1e9f", consent: true, selections: try selections())
        return codec.seal(state)
    }

    /// `visitor_state_open_seal`: what a request costs in visitor state when the cookie is read
    /// and written again: open `sealed` (verify, expiry, decode the state) and seal the opened
    /// state again. Throws when the state does not open.
    @discardableResult
    public static func openAndSealVisitorState(_ sealed: String, codec: VisitorStateCodec) throws -> String {
        guard let state = codec.open(sealed) else { throw VisitorStateDidNotOpen() }
        return codec.seal(state)
    }

    /// The bench's sealed visitor state did not open (a broken codec, or an expired value).
    public struct VisitorStateDidNotOpen: Error, CustomStringConvertible {
        public var description: String { "the sealed visitor state did not open" }
    }

    /// A logger that keeps the benchmarks' output clean (warnings and worse only).
    public static let quietLogger: Logger = {
        var logger = Logger(label: "optimization.bench")
        logger.logLevel = .warning
        return logger
    }()

    /// The outbox bounds of the outbox operations: `durability`, room for a million events.
    public static func outboxConfiguration(_ durability: OutboxDurability) -> OutboxConfiguration {
        OutboxConfiguration(durability: durability, maxEvents: 1_000_000, maxBytes: 1 << 30)
    }

    /// The event of `outbox_append`: a realistic 700-byte track event (a new message id each).
    public static func outboxEvent(_ index: Int) -> OutboxEvent {
        let messageId = UUID().uuidString.lowercased()
        let json = """
            {"type":"track","event":"cta_clicked","properties":{"plan":"pro","position":\(index)},\
            "messageId":"\(messageId)","channel":"server","anonymousId":"4b8e5f0c-51c4-4c6e-9a53-6b0b1c1d2e3f",\
            "originalTimestamp":"2026-01-01T00:00:00.000Z","sentAt":"2026-01-01T00:00:00.000Z",\
            "timestamp":"2026-01-01T00:00:00.000Z","context":{"app":{"name":"kiosk","version":"1.4.2"},\
            "gdpr":{"isConsentGiven":true},"library":{"name":"swift-optimization-linux","version":"0.1.0"},\
            "locale":"en-US","page":{"path":"/","query":{},"referrer":"","search":"","url":"https://example.com/"},\
            "userAgent":"swift-optimization-linux"}}
            """
        return OutboxEvent(queue: index % 3 == 0 ? .insights : .experience, messageId: messageId, profileId: "profile-1",
                           consent: true, payload: Array(json.utf8))
    }

    /// A new temporary directory's URL (not created) for an outbox; remove it when done.
    public static func temporaryOutboxDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("optimization-bench-outbox-\(UUID().uuidString)")
    }
}

/// A transport that answers every request at once, in this process, with 204 and no body (what
/// the Insights API answers an accepted batch): a service's deliveries cost the same every time,
/// with no network, server or event loop whose timing could change what a measurement counts.
public struct ImmediateNoContentTransport: FetchTransport {
    /// Creates the transport.
    public init() {}

    /// Answers 204 at once.
    public func send(_ request: FetchRequest) async throws -> FetchResponse {
        FetchResponse(status: 204)
    }
}
