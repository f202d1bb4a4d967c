import Foundation
import JavaScriptHost
import Logging
import Optimization
import OptimizationTestSupport
@testable import OptimizationDelivery
import OptimizationTesting
import Testing

/// Kills a real process (`OutboxCrashHelper`) with SIGKILL while it appends to and acknowledges
/// in an outbox, then checks that a new process and a reopened outbox still have every event the
/// killed one had accepted. Each round uses its own seed (printed on failure), three generations
/// of helper on the same directory, and one durability policy.
///
/// Rounds run one at a time, and every wait for a helper runs on its own thread, never on the
/// cooperative pool: blocking the pool would stall the suite's async tests.
@Suite("DurableOutbox crash rounds", .serialized)
struct OutboxCrashTests {
    static let rounds = 36
    static let generations = 3

    @Test(arguments: 0..<rounds)
    func everyAcceptedEventSurvivesSIGKILL(_ round: Int) async throws {
        let seed = UInt64(0xC0FFEE) &+ UInt64(round) &* 7_919
        let durability = ["writeOnly", "syncInterval", "syncEveryAppend"][round % 3]
        let fixture = CrashDirectory()
        defer { fixture.remove() }
        var random = SeededRandomNumberGenerator(seed: seed)
        var accepted: [QueueEvent.Queue: [String]] = [:]
        var acking: Set<String> = []
        var acked: Set<String> = []
        for generation in 0..<Self.generations {
            // Kill after a random number of accepted events (sometimes right at start-up).
            let killAfter = Int.random(in: 0...120, using: &random)
            let delay = UInt32.random(in: 0...3_000, using: &random)
            let directory = fixture.directory
            let run = try await CrashHelper.onOwnThread {
                try CrashHelper.runAndKill(
                    directory: directory, seed: seed, generation: generation, durability: durability,
                    afterAccepted: killAfter, extraDelayMicroseconds: delay)
            }
            #expect(run.terminatedBySIGKILL || run.finished, "seed \(seed): helper exited \(run.status): \(run.stderr)")
            for line in run.lines {
                let fields = line.split(separator: " ").map(String.init)
                if fields.count == 3, fields[0] == "accepted", let queue = QueueEvent.Queue(rawValue: fields[1]) {
                    accepted[queue, default: []].append(fields[2])
                } else if fields.count == 2, fields[0] == "acking" {
                    acking.insert(fields[1])
                } else if fields.count == 2, fields[0] == "acked" {
                    acked.insert(fields[1])
                }
            }
        }
        let outbox = try fixture.open(OutboxConfiguration(maxEvents: 1_000_000, maxBytes: 1 << 30), clock: SystemClock())
        defer { outbox.close() }
        let recovered = outbox.recovery.records
        let context = "seed \(seed) (round \(round), \(durability))"
        #expect(
            outbox.recovery.issues.allSatisfy { if case .truncatedTail = $0 { true } else { false } },
            "\(context): \(outbox.recovery.issues)")
        #expect(Set(recovered.map(\.messageId)).count == recovered.count, "\(context): a messageId recovered twice")
        for queue in QueueEvent.Queue.allCases {
            let mine = recovered.filter { $0.queue == queue }
            let ids = Set(mine.map(\.messageId))
            // Every accepted event whose delivery was not started is there (acknowledgement
            // in progress at the kill may or may not have been recorded)…
            let missing = accepted[queue, default: []].filter { !acking.contains($0) && !ids.contains($0) }
            #expect(missing.isEmpty, "\(context): lost \(missing.count) \(queue) events, first \(missing.prefix(3))")
            // …no event whose acknowledgement returned comes back…
            let redelivered = mine.filter { acked.contains($0.messageId) }
            #expect(redelivered.isEmpty, "\(context): acknowledged but recovered \(redelivered.prefix(3).map(\.messageId))")
            // …and they are in the order they were appended (an event written just before the
            // kill may be there without its "accepted" line), each with its own bytes and consent.
            let keys = mine.map { CrashHelper.orderKey($0.messageId) }
            #expect(keys.allSatisfy { $0 != nil } && keys == keys.sorted { $0!.lexicographicallyPrecedes($1!) }, "\(context): \(queue) order broken")
            for record in mine {
                let event = try JSONValue(jsonData: record.payload)
                #expect(event["messageId"]?.stringValue == record.messageId, "\(context)")
                #expect(event["consent"]?.boolValue == record.consent, "\(context)")
            }
        }
    }

    @Test func aSecondProcessGetsAClearLockError() async throws {
        let fixture = CrashDirectory()
        defer { fixture.remove() }
        let outbox = try fixture.open()
        let directory = fixture.directory
        let locked = try await CrashHelper.onOwnThread { try CrashHelper.run(directory: directory, events: 5) }
        #expect(locked.status == 75)
        #expect(locked.stderr.contains("error: the outbox directory \(fixture.directory.path) is in use by another process"), "\(locked.stderr)")
        #expect(locked.lines.isEmpty)
        outbox.close()
        let free = try await CrashHelper.onOwnThread { try CrashHelper.run(directory: directory, events: 5) }
        #expect(free.status == 0, "\(free.stderr)")
        #expect(free.lines.first == "recovered 0" && free.lines.last == "done")
    }
}



/// A temporary outbox directory for one crash round (removed by ``remove()``).
private struct CrashDirectory {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-crash-\(UUID().uuidString)")
    var directory: URL { root.appendingPathComponent("outbox") }

    func open(_ configuration: OutboxConfiguration = .init(), clock: any HostClock = ManualClock()) throws -> DurableOutbox {
        try DurableOutbox(directory: directory, configuration: configuration, clock: clock, logger: Logger(label: "outbox-crash-test"))
    }

    func remove() {
        try? FileManager.default.removeItem(at: root)
    }
}
