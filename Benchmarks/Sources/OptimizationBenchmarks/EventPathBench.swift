import BenchmarkFixtures
import Foundation
@_spi(Benchmarking) import JavaScriptHost
@_spi(Benchmarking) import Optimization
import OptimizationTesting

/// The event path's boundary figures for `optimization-bench`, per event (mean over 200):
///
/// - `event_crossings_track`, `event_crossings_track_view`, `event_crossings_service_insights`,
///   `event_crossings_service_experience`: calls across the Swift–JavaScript boundary (into
///   JavaScript and into host functions, both counted) for one client `track`, one client
///   `trackView` (not sticky), one service `trackClick` and one service `track` (an Experience
///   call: the call that returns the request, Swift's HTTP exchange, the call that interprets
///   the answer), over every engine of the pool.
/// - `event_serializations_track`, `event_serializations_track_view`,
///   `event_serializations_service_insights`, `event_serializations_service_experience`:
///   `JSON.stringify` and `JSON.parse` calls inside the engines for the same events (Swift's own
///   JSON work is not counted).
///
/// Queues are offline (client) or pointed at a loopback server that answers 204 (service), so no
/// flush falls inside the window; batches are not counted.
enum EventPathBench {
    static let events = 200

    /// Wraps `JSON.stringify` / `JSON.parse` in `engine` with counters (benchmark engines only).
    static let countingJSON = """
        (function () {
          if (globalThis.__benchJSONCounts) return;
          var counts = { calls: 0 };
          var stringify = JSON.stringify, parse = JSON.parse;
          JSON.stringify = function () { counts.calls++; return stringify.apply(JSON, arguments); };
          JSON.parse = function () { counts.calls++; return parse.apply(JSON, arguments); };
          globalThis.__benchJSONCounts = counts;
        })();
        """

    static func figures() -> [(String, Double)] {
        guard let client = try? clientFigures(), let service = try? serviceFigures() else { return [] }
        return client + service
    }

    /// Crossings and serializations of `body` run `events` times, per run. The reads of the
    /// counters themselves are taken out.
    static func measure(_ engines: [JavaScriptEngine], _ body: () async throws -> Void) async throws -> (crossings: Double, serializations: Double) {
        for engine in engines { try engine.evaluate(countingJSON) }
        func serializations() throws -> Int {
            try engines.reduce(0) { sum, engine in
                sum + Int(try engine.evaluate("__benchJSONCounts.calls").numberValue ?? 0)
            }
        }
        let jsonBefore = try serializations()
        // Crossings both ways, summed over the engines.
        func crossings() -> Int {
            engines.reduce(0) { sum, engine in sum + engine.crossingCounts.intoJavaScript + engine.crossingCounts.intoHost }
        }
        let before = crossings()
        for _ in 0..<events { try await body() }
        let after = crossings()
        let jsonAfter = try serializations()
        // The first read of the JSON counters happened before `before`; the second is after.
        let crossings = Double(after - before)
        return (crossings / Double(events), Double(jsonAfter - jsonBefore) / Double(events))
    }

    static func clientFigures() throws -> [(String, Double)] {
        let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
        client.setOnline(false)
        try client.initialize(config: OptimizationConfig(
            clientId: "bench", defaults: StorageDefaults(consent: true), queuePolicy: QueuePolicy(offlineMaxEvents: 100_000)))
        defer { client.destroy() }
        return try blocking { () async throws -> [(String, Double)] in
            let track = try await measure(client.measuredEngines) { _ = try await client.track(event: "bench") }
            let view = try await measure(client.measuredEngines) {
                _ = try await client.trackView(TrackViewPayload(componentId: "hero", viewId: "v", viewDuration: .milliseconds(2_000)))
            }
            return [
                ("event_crossings_track", track.crossings), ("event_serializations_track", track.serializations),
                ("event_crossings_track_view", view.crossings), ("event_serializations_track_view", view.serializations),
            ]
        }
    }

    static func serviceFigures() throws -> [(String, Double)] {
        let server = LocalOptimizationAPIServer()
        try blocking { try await server.start() }
        defer { try? blocking { try await server.stop() } }
        let service = OptimizationService(
            config: OptimizationConfig(
                clientId: "bench", api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL),
                queuePolicy: QueuePolicy(flush: QueueFlushPolicy(flushInterval: .milliseconds(3_600_000)))),
            options: .init(engines: 1, insightsMaxEvents: 100_000))
        try blocking { try await service.start() }
        defer { blockingUntilDone { await service.shutdown() } }
        return try blocking { () async throws -> [(String, Double)] in
            let request = service.forRequest(RequestOptions(consent: true, profileId: "bench-profile"))
            let click = try await measure(service.measuredEngines) {
                _ = try await request.trackClick(TrackClickPayload(componentId: "hero"))
            }
            let track = try await measure(service.measuredEngines) {
                _ = try await request.track(event: "bench")
            }
            return [
                ("event_crossings_service_insights", click.crossings), ("event_serializations_service_insights", click.serializations),
                ("event_crossings_service_experience", track.crossings), ("event_serializations_service_experience", track.serializations),
            ]
        }
    }
}
