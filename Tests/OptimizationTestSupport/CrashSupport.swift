import Foundation
import JavaScriptHost
import Logging
import Optimization
import OptimizationTesting
import Synchronization
import Testing
import OptimizationClientFace
import OptimizationServiceFace
import OptimizationEngine

/// Runs the `OutboxCrashHelper` executable built next to the test bundle.
package enum CrashHelper {
    /// API base URLs nothing listens on: the crash helper's deliveries fail and its events stay in the outbox.
    package static let downExperience = "http://127.0.0.1:1/experience/"
    package static let downInsights = "http://127.0.0.1:1/insights/"
    /// Runs `body` (which blocks on a child process) on a new thread and awaits its result.
    package static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    package struct Run: Sendable {
        package var status: Int32
        package var terminatedBySIGKILL: Bool
        package var lines: [String]
        package var stderr: String
        package var finished: Bool { status == 0 && !terminatedBySIGKILL && lines.last == "done" }
    }

    package static func executable() throws -> URL {
        let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBundle.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("OutboxCrashHelper")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "OutboxCrashHelper next to \(testBundle.path)"])
    }

    package static func start(_ arguments: [String]) throws -> (Process, Pipe, Pipe) {
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
    package static func run(directory: URL, events: Int) throws -> Run {
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
    package static func runAndKill(
        directory: URL, seed: UInt64, generation: Int, durability: String, afterAccepted: Int, extraDelayMicroseconds: UInt32
    ) throws -> Run {
        try runAndKill(
            arguments: [directory.path, "\(seed)", "\(generation)", durability, "100000"],
            afterAccepted: afterAccepted, extraDelayMicroseconds: extraDelayMicroseconds)
    }

    /// ``runAndKill(directory:seed:generation:durability:afterAccepted:extraDelayMicroseconds:)``
    /// for any helper mode (`arguments` as given on the command line).
    package static func runAndKill(arguments: [String], afterAccepted: Int, extraDelayMicroseconds: UInt32) throws -> Run {
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
    package static func orderKey(_ messageId: String) -> [Int]? {
        guard messageId.hasPrefix("g") else { return nil }
        let parts = messageId.dropFirst().split(separator: "-").compactMap { Int($0) }
        return parts.count == 2 ? parts : nil
    }

    /// Lines ending in a newline (a line cut by the kill is ignored: it was not fully reported).
    package static func completeLines(_ data: Data) -> [String] {
        var text = String(decoding: data, as: UTF8.self)
        if let lastNewline = text.lastIndex(of: "\n") {
            text = String(text[...lastNewline])
        } else {
            return []
        }
        return text.split(separator: "\n").map(String.init)
    }
}

/// What one stream (a queue, a visitor) of a crash round delivered, checked against the contract.
package struct CrashRoundStream {
    /// Names reported accepted by the killed processes, in order.
    package let accepted: [String]
    /// Deliveries as the server saw them, in order (duplicates included).
    package let delivered: [(name: String, messageId: String)]

    package init(accepted: [String], delivered: [(name: String, messageId: String)]) {
        self.accepted = accepted
        self.delivered = delivered
    }

    /// Accepted names neither delivered nor reported dropped.
    package func lost(reportedDropped: Set<String>) -> [String] {
        let names = Set(delivered.map(\.name))
        return accepted.filter { !names.contains($0) && !reportedDropped.contains($0) }
    }

    /// Accepted names that were delivered.
    package var deliveredCount: Int {
        let names = Set(delivered.map(\.name))
        return accepted.filter { names.contains($0) }.count
    }

    /// Records an issue when an event is lost, the first deliveries are out of accepted order
    /// (an event written just before a kill may arrive without its "accepted" line), or a
    /// duplicate carries a new messageId.
    package func check(reportedDropped: Set<String>, context: String, stream: String) {
        let lost = lost(reportedDropped: reportedDropped)
        #expect(lost.isEmpty, "\(context): lost \(lost.count) \(stream) events, first \(lost.prefix(3))")
        var firstSeen: [String] = []
        for event in delivered where !firstSeen.contains(event.name) { firstSeen.append(event.name) }
        let keys = firstSeen.map { CrashHelper.orderKey($0) }
        #expect(keys.allSatisfy { $0 != nil } && keys == keys.sorted { $0!.lexicographicallyPrecedes($1!) },
                "\(context): \(stream) order broken: \(firstSeen)")
        let idsPerName = Dictionary(grouping: delivered, by: \.name).mapValues { Set($0.map(\.messageId)) }
        #expect(idsPerName.values.allSatisfy { $0.count == 1 }, "\(context): a \(stream) duplicate with a new messageId")
    }
}
