import Foundation
import Optimization
import Testing

/// Runs the real `optimization-bench` executable (built next to the test bundle) with small
/// iteration counts: the JSON keys that tooling reads, the allocation ceilings check, the exit
/// codes.
@Suite("optimization-bench")
struct BenchCommandTests {
    @Test func printsOneJSONObjectWithTheFigures() throws {
        let run = try Bench.run(["--warm-iterations", "200", "--cold-iterations", "50", "--engine-starts", "2",
                                 "--memory-resolves", "2000", "--drain-events", "2000", "--insights-events", "200",
                                 "--operation-iterations", "20"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").count == 1)
        let report = try JSONValue(jsonText: run.stdout)
        for key in ["warm_p50_us", "warm_p99_us", "cold_p50_us", "engine_start_ms", "service_engine_start_ms", "baseline_json_call_p50_us",
                    "cold_with_parse_p50_us", "parse_mb_per_s", "warm_speedup", "cold_speedup", "rss_100k_mib", "rss_1m_mib",
                    "outbox_append_per_s", "outbox_backlog_drain_per_s", "event_crossings_track", "event_serializations_track",
                    "event_crossings_track_view", "event_crossings_service_insights", "event_crossings_service_experience",
                    "insights_events_per_s", "op_warm_resolve_ns", "op_cold_resolve_allocs", "op_event_accept_per_s_per_core",
                    "op_personalized_request_allocs", "op_web_request_views_ns", "op_web_request_views_together_ns"] {
            #expect((report[key]?.doubleValue ?? -1) > 0, "\(key)")
        }
    }

    /// `--check-allocations FILE`: the figures are printed, then every `op_*_allocs` above its
    /// ceiling is named on stderr and the exit status is 1; figures within their ceiling pass.
    @Test func allocationsAboveTheirCeilingFailAfterTheFigures() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-ceilings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ceilings = directory.appendingPathComponent("ceilings.json")
        let table = #"{"op_warm_resolve_allocs": 1000000, "op_cold_resolve_allocs": 0}"#
        try Data(#"{"debug": \#(table), "release": \#(table)}"#.utf8).write(to: ceilings)

        let run = try Bench.run(["--operations-only", "--operation-iterations", "20", "--check-allocations", ceilings.path])
        #expect(run.status == 1, "\(run.stderr)")
        let report = try JSONValue(jsonText: run.stdout)
        #expect((report["op_cold_resolve_allocs"]?.doubleValue ?? 0) > 0)
        #expect(run.stderr.hasPrefix("error: allocations above their ceiling: op_cold_resolve_allocs: "), "\(run.stderr)")
        #expect(!run.stderr.contains("op_warm_resolve_allocs"), "\(run.stderr)")
    }

    @Test func badArgumentsExit64() throws {
        let run = try Bench.run(["--warm-iterations", "0"])
        #expect(run.status == 64)
        #expect(run.stderr.hasPrefix("error: "), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func anUnreadableCeilingsFileExits70() throws {
        let run = try Bench.run(["--operations-only", "--operation-iterations", "1", "--check-allocations", "/nonexistent/ceilings.json"])
        #expect(run.status == 70)
        #expect(run.stderr.hasPrefix("error: cannot read /nonexistent/ceilings.json"), "\(run.stderr)")
    }
}

/// Finds and runs `optimization-bench`.
enum Bench {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The built executable next to the test bundle (or a few folders up from it).
    static func executable() throws -> URL {
        let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBundle.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("optimization-bench")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "optimization-bench next to \(testBundle.path)"])
    }

    static func run(_ arguments: [String]) throws -> Run {
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
        // Both pipes read at once, so a large output cannot block the process.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        group.enter()
        DispatchQueue.global().async { outData = output.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { errData = errors.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        process.waitUntilExit()
        group.wait()
        return Run(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                   stderr: String(decoding: errData, as: UTF8.self))
    }
}
