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

    /// Three entries of a page, each a new revision (the resolves of ``personalizedRequest(on:page:index:)``).
    public static func pageEntries() throws -> [ContentfulEntry] {
        try coldEntries(count: 3, firstRevision: 900_000)
    }

    /// `personalized_request`: what a personalized page asks of the service: `forRequest`, one
    /// `page()` Experience call, three resolves and three `trackView`s.
    public static func personalizedRequest(on service: OptimizationService, page: [ContentfulEntry], index: Int) async throws {
        let request = service.forRequest(RequestOptions(consent: true, profileId: "visitor-\(index % 100)"))
        _ = try await request.page()
        for baseline in page {
            let resolved = request.resolveOptimizedEntry(baseline: baseline)
            _ = try await request.trackView(TrackViewPayload(
                componentId: baseline.id, viewId: "view-\(index)", variantIndex: resolved.selectedOptimization?["variantIndex"]?.intValue ?? 0,
                viewDuration: .milliseconds(0)))
        }
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
