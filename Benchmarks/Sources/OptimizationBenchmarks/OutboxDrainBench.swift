import BenchmarkFixtures
import Dispatch
import Foundation
import Logging
import Optimization
import OptimizationTesting

/// `outbox_backlog_drain_per_s` for `optimization bench`: events per second a client delivers
/// from a 100,000-event backlog found on disk at start (two Experience events for each Insights
/// event) to the test kit's loopback API server, through the queues' in-memory windows (100
/// Experience and 1,000 Insights events). Timed from `initialize` to the server holding every
/// event. Works in a temporary directory, removed afterwards; a failure yields no figure.
enum OutboxDrainBench {
    static func figures(events: Int = 100_000) -> [(String, Double)] {
        guard let rate = try? drainRate(events: events) else { return [] }
        return [("outbox_backlog_drain_per_s", rate.rounded())]
    }

    private static func payload(_ index: Int) -> OutboxEvent {
        let messageId = "drain-\(index)"
        let context = #""context":{"gdpr":{"isConsentGiven":true},"library":{"name":"bench","version":"0"}},"timestamp":"2026-01-01T00:00:00.000Z""#
        if index % 3 == 2 {
            let json = #"{"profile":{"id":"bench-profile"},"event":{"type":"component","componentType":"Entry","componentId":"c\#(index)","variantIndex":0,"messageId":"\#(messageId)",\#(context)}}"#
            return OutboxEvent(queue: .insights, messageId: messageId, profileId: "bench-profile", consent: true, payload: Array(json.utf8))
        }
        let json = #"{"type":"track","event":"e\#(index)","messageId":"\#(messageId)",\#(context)}"#
        return OutboxEvent(queue: .experience, messageId: messageId, profileId: nil, consent: true, payload: Array(json.utf8))
    }

    private static func drainRate(events: Int) throws -> Double {
        var logger = Logger(label: "optimization.bench.drain")
        logger.logLevel = .warning
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("optimization-bench-drain-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let bounds = OutboxConfiguration(maxEvents: events * 2, maxBytes: 1 << 30)
        let outbox = try DurableOutbox(directory: directory.appendingPathComponent("outbox"), configuration: bounds, logger: logger)
        for start in stride(from: 0, to: events, by: 1_000) {
            try outbox.append(contentsOf: (start..<min(events, start + 1_000)).map(payload))
        }
        outbox.close()

        let server = LocalOptimizationAPIServer()
        try blocking { try await server.start() }
        defer { try? blocking { try await server.stop() } }
        let transport = try HTTPFetchTransport(configuration: .init(allowedBaseURLs: [server.experienceBaseURL, server.insightsBaseURL]))
        defer { try? blocking { try await transport.shutdown() } }
        let client = OptimizationClient(environment: .init(logger: logger, transport: transport, storage: .directory(directory), outbox: bounds))
        let started = DispatchTime.now().uptimeNanoseconds
        try client.initialize(config: OptimizationConfig(
            clientId: "bench", defaults: StorageDefaults(consent: true),
            api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)))
        defer { client.destroy() }
        let delivered = try blocking { () async throws -> Int in
            var count = 0
            for _ in 0..<10_000 {
                try await client.flush()
                let experience: Int = server.requests(matching: .experience).reduce(0) { $0 + $1.deliveredEvents.count }
                let insights: Int = server.requests(matching: .insights).reduce(0) { $0 + $1.deliveredEvents.count }
                count = experience + insights
                if count >= events { break }
            }
            return count
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        guard delivered >= events, seconds > 0 else { throw BenchFailure("the backlog was not drained (\(delivered) of \(events))") }
        return Double(events) / seconds
    }
}
