import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import OptimizationTesting
import Testing

/// Crash rounds for the service's outbox: a real process (`OutboxCrashHelper service`) runs an
/// `OptimizationService` with an outbox directory and an Insights window of 5 while its API is
/// down, accepts scripted clicks of three visitors, and is killed with SIGKILL at a random moment;
/// a second generation recovers and is killed too. A service in this process then opens the same
/// directory with the local API server up. Exactly what the contract promises must arrive: every
/// event a killed process reported accepted (except those a queue event reported dropped, by
/// name), at least once, in order per visitor, duplicates only with the same messageId. Each
/// round has its own seed (printed on failure).
@Suite("OptimizationService outbox crash rounds", .serialized)
struct ServiceOutboxCrashTests {
    static let rounds = 6
    static let window = 5

    @Test(arguments: 0..<rounds)
    func everyAcceptedEventIsDeliveredAfterSIGKILL(_ round: Int) async throws {
        let seed = UInt64(0x5E41CE) &+ UInt64(round) &* 7_919
        let context = "seed \(seed) (round \(round))"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("service-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = SeededRandomNumberGenerator(seed: seed)
        var accepted: [String: [String]] = [:]
        var reportedDropped: Set<String> = []
        for generation in 0..<2 {
            let killAfter = Int.random(in: 0...40, using: &random)
            let delay = UInt32.random(in: 0...20_000, using: &random)
            let arguments = ["service", directory.path, CrashHelper.downExperience, CrashHelper.downInsights,
                             "\(seed)", "\(generation)", "100000", "\(Self.window)"]
            let run = try await CrashHelper.onOwnThread {
                try CrashHelper.runAndKill(arguments: arguments, afterAccepted: killAfter, extraDelayMicroseconds: delay)
            }
            #expect(run.terminatedBySIGKILL, "\(context): helper exited \(run.status): \(run.stderr)")
            for line in run.lines {
                let fields = line.split(separator: " ").map(String.init)
                guard fields.count == 3 else { continue }
                if fields[0] == "accepted" { accepted[fields[1], default: []].append(fields[2]) }
                if fields[0] == "dropped" { reportedDropped.insert(fields[2]) }
            }
        }

        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let service = OptimizationService(
                config: OptimizationConfig(
                    clientId: "org-1",
                    api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)),
                options: .init(engines: 1, insightsMaxEvents: Self.window, outboxDirectory: directory),
                environment: .init(clock: clock))
            try await service.start()
            // Forced flushes (backoff and an open circuit ignored), a window at a time.
            for _ in 0..<400 {
                await service.flush()
                if service.running?.delivery.outbox?.count == 0 { break }
            }
            let left = service.running?.delivery.outbox?.count
            await service.shutdown()
            #expect(left == 0, "\(context): everything delivered is acknowledged")

            var delivered: [String: [(name: String, messageId: String)]] = [:]
            for batch in server.insightsBatches {
                let profile = batch["profile"]?["id"]?.stringValue ?? "?"
                for event in batch["events"]?.arrayValue ?? [] {
                    if let name = event["componentId"]?.stringValue, let id = event["messageId"]?.stringValue {
                        delivered[profile, default: []].append((name, id))
                    }
                }
            }
            for (profile, names) in accepted {
                CrashRoundStream(accepted: names, delivered: delivered[profile] ?? [])
                    .check(reportedDropped: reportedDropped, context: context, stream: profile)
            }
        }
    }
}
