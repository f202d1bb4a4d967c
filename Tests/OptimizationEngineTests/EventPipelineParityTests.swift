import OptimizationDelivery
import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
@testable import OptimizationEngine
import OptimizationTesting
import Synchronization
import Testing

/// The delivery half of the event pipeline, run from one table against both faces: the
/// single-visitor client and a request of the service, each with one visitor (profile `p-1`,
/// consent given) on a manual clock, against the same local API server. Each scenario is written
/// once, in terms of ``PipelineFace``; where the faces differ by design the face says so by name
/// (how a visitor withdraws).
@Suite("One event pipeline on both faces", .hangBound)
struct EventPipelineParityTests {
    @Test(arguments: PipelineFace.Kind.allCases, pipelineScenarios)
    fileprivate func bothFacesRunTheScenario(_ kind: PipelineFace.Kind, _ scenario: PipelineScenario) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await LocalOptimizationAPIServer.withRunning { server in
            scenario.prepare(server)
            let clock = ManualClock()
            let face = try await PipelineFace.open(
                kind, server: server, clock: clock, directory: scenario.durable ? directory : nil,
                outbox: scenario.outbox, queuePolicy: scenario.queuePolicy)
            do {
                try await scenario.run(face, server, clock)
            } catch {
                await face.close()
                throw error
            }
            await face.close()
        }
    }
}

/// One face of the event pipeline with one visitor bound. Used by one test task.
final class PipelineFace {
    enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case client, service
        var testDescription: String { rawValue }
    }

    let kind: Kind
    private let client: OptimizationClient?
    private let service: OptimizationService?
    private let request: OptimizationRequest?
    private var reportStream: AsyncStream<QueueEvent>.AsyncIterator
    /// The queue reports read so far.
    private(set) var reports: [QueueEvent] = []

    private init(kind: Kind, client: OptimizationClient?, service: OptimizationService?, request: OptimizationRequest?, reports: AsyncStream<QueueEvent>) {
        self.kind = kind
        self.client = client
        self.service = service
        self.request = request
        reportStream = reports.makeAsyncIterator()
    }

    static func open(
        _ kind: Kind, server: LocalOptimizationAPIServer, clock: ManualClock, directory: URL?, outbox: OutboxConfiguration,
        queuePolicy: QueuePolicy?
    ) async throws -> PipelineFace {
        let api = OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)
        switch kind {
        case .client:
            let client = OptimizationClient(environment: .init(
                clock: clock, storage: directory.map { .directory($0) } ?? .disabled, outbox: outbox))
            let face = PipelineFace(kind: kind, client: client, service: nil, request: nil, reports: client.queueEvents)
            try client.initialize(config: OptimizationConfig(
                clientId: "org-1", defaults: StorageDefaults(consent: true, profile: ["id": "p-1"]), api: api, queuePolicy: queuePolicy))
            return face
        case .service:
            let service = OptimizationService(
                config: OptimizationConfig(clientId: "org-1", api: api, queuePolicy: queuePolicy),
                options: .init(engines: 1, outboxDirectory: directory, outbox: outbox),
                environment: .init(clock: clock))
            let face = PipelineFace(
                kind: kind, client: nil, service: service, request: service.forRequest(RequestOptions(consent: true, profileId: "p-1")),
                reports: service.queueEvents)
            try await service.start()
            return face
        }
    }

    /// An Insights event (a click on `componentId`).
    func trackClick(_ componentId: String) async throws -> EventResult {
        if let client { return try await client.trackClick(TrackClickPayload(componentId: componentId)) }
        return try await request!.trackClick(TrackClickPayload(componentId: componentId))
    }

    /// Sends what is queued now, as the face's `flush()` does.
    func flush() async throws {
        if let client { try await client.flush() } else { await service?.flush() }
    }

    /// Insights events waiting in memory.
    var queuedInsightsEvents: Int {
        if let client { return client.queueSizes()?.insights ?? -1 }
        return service?.queuedEventCount ?? -1
    }

    /// Events in the durable outbox (nil without one).
    var storedEvents: Int? {
        if let client { return client.currentRuntime?.outbox?.outbox.count }
        return service?.running?.delivery.outbox?.count
    }

    /// The visitor withdraws: the client's consent is refused; the service erases the profile's
    /// events (it keeps no consent between requests).
    func withdraw() throws {
        if let client {
            client.consent(false)
        } else {
            _ = try service?.eraseProfile("p-1")
        }
    }

    /// Waits for the first report of `type` (one that already arrived counts); the suite's time
    /// limit bounds the wait.
    func waitForReport(_ type: QueueEventType) async throws -> QueueEvent {
        while true {
            if let report = reports.first(where: { $0.type == type }) { return report }
            guard let next = await reportStream.next() else { throw CancellationError() }
            reports.append(next)
        }
    }

    func close() async {
        client?.destroy()
        await service?.shutdown()
    }
}

/// A scenario of the pipeline's delivery half, written once for both faces.
struct PipelineScenario: Sendable, CustomTestStringConvertible {
    let name: String
    var durable = false
    var outbox = OutboxConfiguration()
    var queuePolicy: QueuePolicy?
    var prepare: @Sendable (LocalOptimizationAPIServer) -> Void = { _ in }
    let run: @Sendable (PipelineFace, LocalOptimizationAPIServer, ManualClock) async throws -> Void
    var testDescription: String { name }
}

private func retryDelay(_ report: QueueEvent) -> Int? {
    report.context["retryDelayMs"]?.intValue
}

/// Moves the clock to one millisecond before the wait `report` announced (no new Insights
/// request goes out), then onto it, and waits for the request that follows.
private func passTheWait(
    of report: QueueEvent, _ face: PipelineFace, _ server: LocalOptimizationAPIServer, _ clock: ManualClock
) async throws {
    let sent = server.requests(matching: .insights).count
    let wait = try #require(retryDelay(report))
    clock.advance(by: .milliseconds(wait - 1))
    #expect(server.requests(matching: .insights).count == sent, "nothing is sent before the wait is over")
    clock.advance(by: .milliseconds(1))
    try await server.waitForRequests(count: sent + 1, matching: .insights)
}

let pipelineScenarios: [PipelineScenario] = [
    PipelineScenario(name: "batching: events wait for a flush, which sends them in one request") { face, server, _ in
        for index in 0..<3 { #expect(try await face.trackClick("hero-\(index)").outcome == .accepted) }
        #expect(face.queuedInsightsEvents == 3)
        #expect(server.requests(matching: .insights).isEmpty)
        try await face.flush()
        #expect(server.requests(matching: .insights).count == 1)
        #expect(server.insightsEvents.compactMap { $0["componentId"]?.stringValue } == ["hero-0", "hero-1", "hero-2"])
        #expect(face.queuedInsightsEvents == 0)
    },
    PipelineScenario(
        name: "backoff: a failed flush is retried after the backoff, on the clock",
        prepare: { $0.enqueue(.status(503), for: .insights) }
    ) { face, server, clock in
        _ = try await face.trackClick("hero")
        try await face.flush()
        let failure = try await face.waitForReport(.flushFailure)
        #expect(failure.context["consecutiveFailures"]?.intValue == 1)
        // Base 500 ms with up to 20 % jitter.
        #expect((500...600).contains(retryDelay(failure) ?? 0))
        #expect(face.queuedInsightsEvents == 1)
        try await passTheWait(of: failure, face, server, clock)
        _ = try await face.waitForReport(.flushRecovered)
        #expect(server.insightsEvents.count == 1)
        #expect(face.queuedInsightsEvents == 0)
    },
    PipelineScenario(
        name: "Retry-After: the wait is at least the server's",
        prepare: { $0.enqueue(.retryAfter(seconds: 30), for: .insights) }
    ) { face, _, _ in
        _ = try await face.trackClick("hero")
        try await face.flush()
        let failure = try await face.waitForReport(.flushFailure)
        #expect((retryDelay(failure) ?? 0) >= 30_000)
    },
    PipelineScenario(
        name: "circuit: consecutive failures open it for its window",
        queuePolicy: QueuePolicy(flush: QueueFlushPolicy(maxConsecutiveFailures: 2, circuitOpenDuration: .milliseconds(10_000))),
        prepare: { $0.enqueue(.status(503), .status(503), for: .insights) }
    ) { face, server, clock in
        _ = try await face.trackClick("hero")
        try await face.flush()
        try await passTheWait(of: try await face.waitForReport(.flushFailure), face, server, clock)
        let open = try await face.waitForReport(.circuitOpen)
        #expect(open.context["consecutiveFailures"]?.intValue == 2)
        #expect(retryDelay(open) == 10_000)
        try await passTheWait(of: open, face, server, clock)
        _ = try await face.waitForReport(.flushRecovered)
        #expect(server.insightsEvents.count == 1)
    },
    PipelineScenario(name: "outbox: stored before the call returns, acknowledged once delivered", durable: true) { face, server, _ in
        #expect(try await face.trackClick("hero").outcome == .accepted)
        #expect(face.storedEvents == 1, "on disk when the call returned")
        try await face.flush()
        #expect(server.insightsEvents.count == 1)
        #expect(face.storedEvents == 0, "acknowledged")
    },
    PipelineScenario(
        name: "cap drops: the outbox's bound drops the oldest, which leaves the queue too",
        durable: true, outbox: OutboxConfiguration(maxEvents: 2)
    ) { face, server, _ in
        for index in 0..<3 { _ = try await face.trackClick("hero-\(index)") }
        #expect(face.storedEvents == 2)
        let drop = try await face.waitForReport(.offlineDrop)
        #expect(drop.context["droppedCount"]?.intValue == 1)
        #expect(face.queuedInsightsEvents == 2)
        try await face.flush()
        #expect(server.insightsEvents.compactMap { $0["componentId"]?.stringValue } == ["hero-1", "hero-2"])
        #expect(face.storedEvents == 0)
    },
    PipelineScenario(name: "withdrawal: the visitor's queued events leave memory and disk", durable: true) { face, server, _ in
        for index in 0..<2 { _ = try await face.trackClick("hero-\(index)") }
        #expect(face.storedEvents == 2)
        try face.withdraw()
        #expect(face.queuedInsightsEvents == 0)
        #expect(face.storedEvents == 0)
        try await face.flush()
        #expect(server.requests(matching: .insights).isEmpty)
    },
]
