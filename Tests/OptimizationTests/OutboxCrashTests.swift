import Foundation
import JavaScriptHost
import Logging
@testable import Optimization
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


/// Runs the `OutboxCrashHelper` executable built next to the test bundle.
enum CrashHelper {
    /// Runs `body` (which blocks on a child process) on a new thread and awaits its result.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    struct Run: Sendable {
        var status: Int32
        var terminatedBySIGKILL: Bool
        var lines: [String]
        var stderr: String
        var finished: Bool { status == 0 && !terminatedBySIGKILL && lines.last == "done" }
    }

    static func executable() throws -> URL {
        let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBundle.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("OutboxCrashHelper")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "OutboxCrashHelper next to \(testBundle.path)"])
    }

    static func start(_ arguments: [String]) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, output, errors)
    }

    /// Runs to completion.
    static func run(directory: URL, events: Int) throws -> Run {
        let (process, output, errors) = try start([directory.path, "1", "0", "writeOnly", "\(events)"])
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, terminatedBySIGKILL: false, lines: completeLines(out),
                   stderr: String(decoding: err, as: UTF8.self))
    }

    /// Starts the helper, waits until it reported `afterAccepted` accepted events (or finished),
    /// sleeps `extraDelayMicroseconds` while it keeps appending, then SIGKILLs it and collects
    /// every complete line it printed.
    static func runAndKill(
        directory: URL, seed: UInt64, generation: Int, durability: String, afterAccepted: Int, extraDelayMicroseconds: UInt32
    ) throws -> Run {
        try runAndKill(
            arguments: [directory.path, "\(seed)", "\(generation)", durability, "100000"],
            afterAccepted: afterAccepted, extraDelayMicroseconds: extraDelayMicroseconds)
    }

    /// ``runAndKill(directory:seed:generation:durability:afterAccepted:extraDelayMicroseconds:)``
    /// for any helper mode (`arguments` as given on the command line).
    static func runAndKill(arguments: [String], afterAccepted: Int, extraDelayMicroseconds: UInt32) throws -> Run {
        let (process, output, errors) = try start(arguments)
        let reader = output.fileHandleForReading
        var collected = Data()
        var acceptedCount = 0
        while acceptedCount < afterAccepted {
            let chunk = reader.availableData
            if chunk.isEmpty { break }  // the helper ended by itself
            collected += chunk
            acceptedCount = completeLines(collected).filter { $0.hasPrefix("accepted ") }.count
        }
        usleep(extraDelayMicroseconds)
        kill(process.processIdentifier, SIGKILL)
        collected += reader.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, terminatedBySIGKILL: process.terminationReason == .uncaughtSignal,
            lines: completeLines(collected), stderr: String(decoding: err, as: UTF8.self))
    }

    /// `g<generation>-<number>` as a sortable pair: the order the helper appended in.
    static func orderKey(_ messageId: String) -> [Int]? {
        guard messageId.hasPrefix("g") else { return nil }
        let parts = messageId.dropFirst().split(separator: "-").compactMap { Int($0) }
        return parts.count == 2 ? parts : nil
    }

    /// Lines ending in a newline (a line cut by the kill is ignored: it was not fully reported).
    static func completeLines(_ data: Data) -> [String] {
        var text = String(decoding: data, as: UTF8.self)
        if let lastNewline = text.lastIndex(of: "\n") {
            text = String(text[...lastNewline])
        } else {
            return []
        }
        return text.split(separator: "\n").map(String.init)
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
