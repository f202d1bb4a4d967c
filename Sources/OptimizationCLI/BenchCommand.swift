import ArgumentParser
import Dispatch
import Foundation
import JavaScriptHost
import Optimization

/// `optimization bench`: measures the resolve path and engine start on this machine and prints
/// one JSON object. Timing goals are checked here, never in timed tests.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure resolve latency and engine start; print one JSON object.",
        discussion: """
            warm_*: the same prepared entry resolved again (the engine already holds it).
            cold_*: a new entry (new revision) every call: JSON transfer into the engine included,
            Swift-side parsing of the entry not included (see parse_p50_us).
            engine_start_ms: create an engine and load the embedded JSRuntime (median).
            trackers_1000_*: 1,000 view trackers on one client, 60 s of simulated visibility on a
            manual clock (events consented and built, delivery offline).
            """
    )

    @Option(help: "Timed warm resolutions.")
    var warmIterations = 100_000

    @Option(help: "Timed cold resolutions (each a new entry).")
    var coldIterations = 5_000

    @Option(help: "Engine starts to time.")
    var engineStarts = 30

    func validate() throws {
        guard warmIterations > 0, coldIterations > 0, engineStarts > 0 else {
            throw ValidationError("iteration counts must be positive")
        }
    }

    func run() throws {
        var report: [(String, Double)] = []
        let starts = try measureEngineStarts()
        report.append(("engine_start_ms", percentile(starts, 0.5)))
        report.append(("engine_start_first_ms", starts.first ?? 0))

        let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
        try client.initialize(config: OptimizationConfig(clientId: "bench", entryCacheSize: 1000))
        defer { client.destroy() }
        let entryText = BenchmarkFixture.entryJSON()
        let entry = try ContentfulEntry(jsonText: entryText)
        let selections = try SelectedOptimizations(jsonData: Array(BenchmarkFixture.selectionsJSON.utf8))
        guard client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).entryId
            == "4k6ZyFQnR2POY5IJLLlJRb"
        else { throw CLIFailure.software("benchmark entry did not resolve to its variant") }

        for _ in 0..<2_000 { _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections) }
        let warm = time(warmIterations) { _ in
            _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
        }
        report += [("warm_p50_us", percentile(warm, 0.5)), ("warm_p99_us", percentile(warm, 0.99))]

        let coldEntries = try (0..<coldIterations).map { index in
            try ContentfulEntry(jsonText: BenchmarkFixture.entryJSON(revision: 100 + index))
        }
        let cold = time(coldIterations) { index in
            _ = client.resolveOptimizedEntry(baseline: coldEntries[index], selectedOptimizations: selections)
        }
        report += [("cold_p50_us", percentile(cold, 0.5)), ("cold_p99_us", percentile(cold, 0.99))]

        let parse = time(2_000) { index in
            _ = try? ContentfulEntry(jsonText: entryText)
        }
        report.append(("parse_p50_us", percentile(parse, 0.5)))
        report += trackerFigures()
        report += try ServiceBenchmark.run(entry: entry, selections: selections, resolves: warmIterations)
        report += OutboxBench.figures()
        report.append(("entry_bytes", Double(entryText.utf8.count)))
        report.append(("selections", Double(selections.selections.count)))
        report.append(("warm_iterations", Double(warmIterations)))
        report.append(("cold_iterations", Double(coldIterations)))

        let fields = report.map { name, value in
            let rounded = (value * 100).rounded() / 100
            return "\"\(name)\":\(rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded))"
        }
        print("{" + fields.joined(separator: ",") + "}")
    }

    /// 1,000 concurrent view trackers: creation, per-update cost and a simulated minute.
    private func trackerFigures() -> [(String, Double)] {
        let clock = ManualClock()
        let client = OptimizationClient(environment: .init(clock: clock, transport: UnconfiguredFetchTransport(), storage: .disabled))
        do {
            try client.initialize(config: OptimizationConfig(clientId: "bench"))
        } catch {
            return []
        }
        defer { client.destroy() }
        client.setOnline(false)
        client.consent(true)
        return TrackerBenchmark.run(client: client, clock: clock)
    }

    private func measureEngineStarts() throws -> [Double] {
        try (0..<engineStarts).map { _ in
            let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
            let start = DispatchTime.now().uptimeNanoseconds
            try client.initialize(config: OptimizationConfig(clientId: "bench"))
            let elapsed = DispatchTime.now().uptimeNanoseconds - start
            client.destroy()
            return Double(elapsed) / 1_000_000
        }
    }

    /// Microseconds per call, one sample per call.
    private func time(_ count: Int, _ body: (Int) -> Void) -> [Double] {
        var samples = [Double](repeating: 0, count: count)
        for index in 0..<count {
            let start = DispatchTime.now().uptimeNanoseconds
            body(index)
            samples[index] = Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000
        }
        return samples
    }

    private func percentile(_ samples: [Double], _ fraction: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
    }
}
