import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import OptimizationTesting
import Testing

/// The crash test of the single-visitor client's outbox: a real process (`OutboxCrashHelper
/// client`) runs an `OptimizationClient` with a storage directory while its API is down, accepts
/// scripted Experience (`track`) and Insights (`trackClick`) events, and is killed with SIGKILL at
/// a random moment; a second generation recovers and is killed too. A client in this process then
/// opens the same directory with the local API server up: every event a killed process reported
/// accepted must reach the server, at least once, in order per queue, duplicates only with the same
/// messageId. Each round has its own seed (printed on failure).
@Suite("OptimizationClient outbox crash rounds", .serialized)
struct ClientOutboxCrashTests {
    /// 12 in CI; `scripts/soak-outbox --rounds N` runs N (OUTBOX_SOAK_ROUNDS).
    static let rounds = Int(ProcessInfo.processInfo.environment["OUTBOX_SOAK_ROUNDS"] ?? "") ?? 12
    static let soak = ProcessInfo.processInfo.environment["OUTBOX_SOAK_ROUNDS"] != nil
    static let generations = 2
    static let downExperience = CrashHelper.downExperience
    static let downInsights = CrashHelper.downInsights

    @Test(arguments: 0..<rounds)
    func everyAcceptedEventIsDeliveredAfterSIGKILL(_ round: Int) async throws {
        let seed = UInt64(0xC11E47) &+ UInt64(round) &* 104_729
        let context = "seed \(seed) (round \(round))"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("client-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = SeededRandomNumberGenerator(seed: seed)
        var accepted: [QueueEvent.Queue: [String]] = [:]
        var reportedDropped: Set<String> = []
        for generation in 0..<Self.generations {
            let killAfter = Int.random(in: 0...25, using: &random)
            let delay = UInt32.random(in: 0...20_000, using: &random)
            let arguments = ["client", directory.path, Self.downExperience, Self.downInsights, "\(seed)", "\(generation)", "100000"]
            let run = try await CrashHelper.onOwnThread {
                try CrashHelper.runAndKill(arguments: arguments, afterAccepted: killAfter, extraDelayMicroseconds: delay)
            }
            #expect(run.terminatedBySIGKILL, "\(context): helper exited \(run.status): \(run.stderr)")
            for line in run.lines {
                let fields = line.split(separator: " ").map(String.init)
                if fields.count == 3, fields[0] == "accepted", let queue = QueueEvent.Queue(rawValue: fields[1]) {
                    accepted[queue, default: []].append(fields[2])
                } else if fields.count == 3, fields[0] == "dropped" {
                    reportedDropped.insert(fields[2])
                }
            }
        }

        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let client = OptimizationClient(environment: .init(clock: clock, storage: .directory(directory)))
            let reports = client.queueEvents
            let finalDrops = Task {
                var names: Set<String> = []
                for await report in reports where report.type == .offlineDrop || report.type == .batchDropped {
                    for event in report.context["droppedEvents"]?.arrayValue ?? [] {
                        if let name = event["event"]?.stringValue ?? event["componentId"]?.stringValue { names.insert(name) }
                    }
                }
                return names
            }
            try client.initialize(config: OptimizationConfig(
                clientId: "org-1", defaults: StorageDefaults(consent: true),
                api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)))
            // Recovered Insights events were accepted before any profile existed: the upsert's
            // answer gives them one, then a flush sends them.
            #expect(try await client.identify(userId: "after-the-crash").accepted)
            // A request that fails on a busy machine (a timeout) waits for its backoff on the
            // manual clock: move time past any backoff or open circuit until the outbox is empty.
            for _ in 0..<20 {
                try await client.flush()
                if client.currentRuntime?.outbox?.outbox.count == 0 { break }
                clock.advance(by: .milliseconds(130_000))
            }

            let delivered: [QueueEvent.Queue: [(name: String, messageId: String)]] = [
                .experience: server.requests(matching: .experience).flatMap(\.deliveredEvents).compactMap { event in
                    guard event["type"] == "track", let name = event["event"]?.stringValue, let id = event["messageId"]?.stringValue else { return nil }
                    return (name, id)
                },
                .insights: server.requests(matching: .insights).flatMap(\.deliveredEvents).compactMap { event in
                    guard let name = event["componentId"]?.stringValue, let id = event["messageId"]?.stringValue else { return nil }
                    return (name, id)
                },
            ]
            let outboxCount = client.currentRuntime?.outbox?.outbox.count
            client.destroy()
            // Exactly what the contract promises: every accepted event arrives, except those a
            // queue event reported dropped (an outbox bound or a refusal), by name.
            reportedDropped.formUnion(await finalDrops.value)
            var totals = (accepted: 0, delivered: 0, dropped: reportedDropped.count, lost: 0)
            for queue in QueueEvent.Queue.allCases {
                let stream = CrashRoundStream(accepted: accepted[queue, default: []], delivered: delivered[queue] ?? [])
                totals.accepted += stream.accepted.count
                totals.delivered += stream.deliveredCount
                totals.lost += stream.lost(reportedDropped: reportedDropped).count
                stream.check(reportedDropped: reportedDropped, context: context, stream: "\(queue)")
            }
            #expect(outboxCount == 0, "\(context): everything delivered is acknowledged")
            if Self.soak {
                print("soak round \(round): accepted \(totals.accepted) delivered \(totals.delivered) dropped \(totals.dropped) lost \(totals.lost)")
            }
        }
    }
}

