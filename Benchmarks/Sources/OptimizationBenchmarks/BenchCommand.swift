import ArgumentParser
import BenchmarkFixtures
import Dispatch
import Foundation
import JavaScriptHost
@_spi(Benchmarking) import Optimization

/// `optimization-bench`: measures the resolve path, engine start, the service, view tracking
/// and the durable outbox on this machine and prints one JSON object. Timing goals are checked
/// here, never in timed tests. A separate executable, so the `optimization` tool carries no
/// benchmark code and no test kit.
@main
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "optimization-bench",
        abstract: "Measure resolve latency and engine start; print one JSON object.",
        discussion: """
            warm_*: the same prepared entry resolved again for the same selections (answered from
              the runtime's memo of resolver answers).
            warm_engine_*: the same, with the shared resolver running in the engine every time.
            context_replay_1000_us: the extra cost of the first engine call after 1,000 memoized
              resolves (it registers their contexts first).
            cold_*: a new entry (new revision) every call: JSON transfer into the engine included,
            Swift-side parsing of the entry not included (see parse_p50_us).
            engine_start_ms: create a client engine, load its part of the embedded JSRuntime
              (the client scripts and the core scripts they need) and initialize it (median).
            service_engine_start_ms: create one engine of a service's pool, load the service
              scripts and the core scripts they need and configure it (median; no visitor, no
              __bridge). Client and service starts alternate.
            baseline_json_call_p50_us: the per-call JSON pattern in the same engine (entry and
            selections as JSON text, JSON.parse in JavaScript, the shared resolver,
            JSON.stringify, the result parsed back by this library's parser).
            cold_with_parse_p50_us: a new entry revision including its Swift-side parse.
            parse_mb_per_s: entry bytes / parse_p50_us (validate and index the text, check the
              entry's shape; the document's tree is built on demand).
            tree_parse_mb_per_s: the same bytes parsed into a full JSONValue tree, for comparison.
            warm_speedup = baseline / warm p50,
            cold_speedup = baseline / cold_with_parse p50.
            rss_100k_mib, rss_1m_mib: resident memory after 100,000 and 1,000,000 warm resolves.
            insights_events_per_s: service trackClick events accepted per second, 2 threads (the
              queue flushing to a loopback API server in the process); insights_scaling_2: the
              2-thread rate over the 1-thread rate of the same run.
            op_<operation>_ns / _allocs / _per_s_per_core: per operation, one thread: nanoseconds,
              malloc calls (package-benchmark's interposer, preloaded by re-executing the
              benchmark) and evaluations per second per core, for warm_resolve, cold_resolve,
              event_accept, web_request_views (forRequest for a web request + 3
              trackView), web_request_views_together (the same 3 views in one trackViews),
              personalized_request (forRequest + page() + 3 resolves + 1 trackViews of 3) and
              visitor_state_open_seal (a sealed visitor state with a profile id,
              consent and 20 selections opened, then sealed again). --check-allocations FILE
              fails when one exceeds its ceiling.
            trackers_1000_*: 1,000 view trackers on one client, 60 s of simulated visibility on a
            manual clock (events consented and built, delivery offline).
            """
    )

    @Option(help: "Timed warm resolutions.")
    var warmIterations = 100_000

    @Option(help: "Timed cold resolutions (each a new entry).")
    var coldIterations = 5_000

    @Option(help: "Timed parses of the bench entry (parse_p50_us).")
    var parseIterations = 2_000

    @Option(help: "Events in the backlog that outbox_backlog_drain_per_s drains.")
    var drainEvents = 100_000

    @Flag(help: "Only the durable outbox's figures (outbox_*).")
    var outboxOnly = false

    @Flag(help: "Only the event path's boundary figures (event_crossings_*, event_serializations_*).")
    var eventsOnly = false

    @Flag(help: "Only the service's Insights accept rates (insights_*).")
    var insightsOnly = false

    @Option(help: "Events each thread sends per run of the insights_* figures.")
    var insightsEvents = 20_000

    @Flag(help: "Only the per-operation figures (op_*: ns, allocations and evaluations per second per core).")
    var operationsOnly = false

    @Option(help: "Operations per run of the op_* figures (warm resolves and visitor-state open+seals run ten times as many, a personalized request a tenth).")
    var operationIterations = 2_000

    @Option(help: "Exit 1 when an op_*_allocs figure exceeds its ceiling in this JSON file ({\"debug\": {…}, \"release\": {…}}).")
    var checkAllocations: String?

    @Option(help: "Engine starts to time (each kind).")
    var engineStarts = 30

    @Flag(help: "Only the engine-start figures (engine_start_*, service_engine_start_*).")
    var engineStartOnly = false

    @Option(help: "Warm resolves for the memory figures (rss_100k_mib after a tenth of them, rss_1m_mib after all).")
    var memoryResolves = 1_000_000

    func validate() throws {
        guard warmIterations > 0, coldIterations > 0, parseIterations > 0, engineStarts > 0, memoryResolves >= 10, drainEvents > 0, insightsEvents > 0, operationIterations > 0 else {
            throw ValidationError("iteration counts must be positive")
        }
    }

    /// Runs the benchmark; a failure prints `error: …` on stderr and exits non-zero (70 when a
    /// measurement went wrong, 64 for bad arguments).
    static func main() {
        runReportingFailures()
    }

    func run() throws {
        var report: [(String, Double)] = []
        if eventsOnly {
            print(Self.json(EventPathBench.figures()))
            return
        }
        if operationsOnly {
            let report = try PerOperationBench.figures(
                entryText: BenchmarkFixture.entryJSON(),
                selections: try SelectedOptimizations(jsonData: Array(BenchmarkFixture.selectionsJSON.utf8)),
                iterations: operationIterations)
            print(Self.json(report))
            try checkCeilings(report)
            return
        }
        if insightsOnly {
            print(Self.json(try InsightsThroughputBench.figures(eventsPerThread: insightsEvents)))
            return
        }
        if outboxOnly {
            print(Self.json(OutboxBench.figures() + OutboxDrainBench.figures(events: drainEvents)))
            return
        }
        if engineStartOnly {
            print(Self.json(try engineFigures()))
            return
        }
        report += try engineFigures()

        let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
        try client.initialize(config: OptimizationConfig(clientId: "bench", entryCacheSize: 1000))
        defer { client.destroy() }
        let entryText = BenchmarkFixture.entryJSON()
        let entry = try ContentfulEntry(jsonText: entryText)
        let selections = try SelectedOptimizations(jsonData: Array(BenchmarkFixture.selectionsJSON.utf8))
        guard client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).entryId
            == "4k6ZyFQnR2POY5IJLLlJRb"
        else { throw BenchFailure("benchmark entry did not resolve to its variant") }

        for _ in 0..<2_000 { _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections) }
        let warm = time(warmIterations) { _ in
            _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
        }
        report += [("warm_p50_us", percentile(warm, 0.5)), ("warm_p99_us", percentile(warm, 0.99))]
        // The same resolves with the shared resolver running in the engine every time (no memo).
        let warmEngine = time(warmIterations) { _ in
            _ = client.resolveOptimizedEntryInEngine(baseline: entry, selectedOptimizations: selections)
        }
        report += [("warm_engine_p50_us", percentile(warmEngine, 0.5)), ("warm_engine_p99_us", percentile(warmEngine, 0.99))]
        report.append(("context_replay_1000_us", measureContextReplay(client: client, entry: entry, selections: selections)))
        // Before the cold phases, whose thousands of prepared entries would dominate the figures.
        report += memoryFigures(client: client, entry: entry, selections: selections)

        let coldEntries = try (0..<coldIterations).map { index in
            try ContentfulEntry(jsonText: BenchmarkFixture.entryJSON(revision: 100 + index))
        }
        let cold = time(coldIterations) { index in
            _ = client.resolveOptimizedEntry(baseline: coldEntries[index], selectedOptimizations: selections)
        }
        report += [("cold_p50_us", percentile(cold, 0.5)), ("cold_p99_us", percentile(cold, 0.99))]

        let parse = time(parseIterations) { _ in
            _ = try? ContentfulEntry(jsonText: entryText)
        }
        let parseP50 = percentile(parse, 0.5)
        report.append(("parse_p50_us", parseP50))
        report.append(("parse_mb_per_s", parseP50 > 0 ? Double(entryText.utf8.count) / parseP50 : 0))
        let treeParseP50 = percentile(time(parseIterations) { _ in _ = try? JSONValue(jsonText: entryText) }, 0.5)
        report.append(("tree_parse_mb_per_s", treeParseP50 > 0 ? Double(entryText.utf8.count) / treeParseP50 : 0))

        let coldTexts = (0..<coldIterations).map { BenchmarkFixture.entryJSON(revision: 100_000 + $0) }
        let coldWithParse = time(coldIterations) { index in
            guard let fresh = try? ContentfulEntry(jsonText: coldTexts[index]) else { return }
            _ = client.resolveOptimizedEntry(baseline: fresh, selectedOptimizations: selections)
        }
        let coldWithParseP50 = percentile(coldWithParse, 0.5)
        report.append(("cold_with_parse_p50_us", coldWithParseP50))

        let baselineP50 = try measureJSONCallBaseline(client: client, entryText: entryText)
        let warmP50 = percentile(warm, 0.5)
        report.append(("baseline_json_call_p50_us", baselineP50))
        report.append(("warm_speedup", warmP50 > 0 ? baselineP50 / warmP50 : 0))
        report.append(("cold_speedup", coldWithParseP50 > 0 ? baselineP50 / coldWithParseP50 : 0))
        report += trackerFigures()
        report += try ServiceBenchmark.run(entry: entry, selections: selections, resolves: warmIterations)
        report += try InsightsThroughputBench.figures(eventsPerThread: insightsEvents)
        report += try PerOperationBench.figures(entryText: entryText, selections: selections, iterations: operationIterations)
        report += OutboxBench.figures()
        report += OutboxDrainBench.figures(events: drainEvents)
        report += EventPathBench.figures()
        report.append(("entry_bytes", Double(entryText.utf8.count)))
        report.append(("selections", Double(selections.selections.count)))
        report.append(("warm_iterations", Double(warmIterations)))
        report.append(("cold_iterations", Double(coldIterations)))

        print(Self.json(report))
        try checkCeilings(report)
    }

    /// With `--check-allocations`: every `op_*_allocs` figure within its ceiling, else a
    /// failure naming each one above it (after the figures were printed).
    private func checkCeilings(_ report: [(String, Double)]) throws {
        guard let checkAllocations else { return }
        let failures = try PerOperationBench.check(report, against: checkAllocations)
        guard failures.isEmpty else { throw AllocationCeilingsExceeded(failures: failures) }
    }

    /// The figures as one JSON object, values rounded to two decimals.
    private static func json(_ report: [(String, Double)]) -> String {
        let fields = report.map { name, value in
            let rounded = (value * 100).rounded() / 100
            return "\"\(name)\":\(rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded))"
        }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The deferred work of memoized resolves: how much longer the first engine call after 1,000
    /// of them takes (it registers their 1,000 contexts first) than the same call with nothing
    /// pending. Median of 21 rounds each, in µs.
    private func measureContextReplay(client: OptimizationClient, entry: ContentfulEntry, selections: SelectedOptimizations) -> Double {
        var idle: [Double] = []
        var afterResolves: [Double] = []
        for _ in 0..<21 {
            idle += time(1) { _ in _ = client.hasConsent("page") }
            for _ in 0..<1_000 { _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections) }
            afterResolves += time(1) { _ in _ = client.hasConsent("page") }
        }
        return max(0, percentile(afterResolves, 0.5) - percentile(idle, 0.5))
    }

    /// p50 of the per-call JSON pattern on the bench entry and selections, after checking that it
    /// picks the same variant as the engine.
    private func measureJSONCallBaseline(client: OptimizationClient, entryText: String) throws -> Double {
        let baseline = try client.makeJSONCallBaseline()
        let selectionsText = BenchmarkFixture.selectionsJSON
        guard try baseline.resolve(entryJSON: entryText, selectionsJSON: selectionsText)["entry"]?["sys"]?["id"]
            == "4k6ZyFQnR2POY5IJLLlJRb"
        else { throw BenchFailure("the JSON-call baseline did not resolve to the variant") }
        for _ in 0..<200 { _ = try? baseline.resolve(entryJSON: entryText, selectionsJSON: selectionsText) }
        let samples = time(coldIterations) { _ in
            _ = try? baseline.resolve(entryJSON: entryText, selectionsJSON: selectionsText)
        }
        return percentile(samples, 0.5)
    }

    /// Resident memory after 100,000 and after 1,000,000 warm resolves (MiB; a tenth of
    /// `--memory-resolves` and all of them).
    private func memoryFigures(
        client: OptimizationClient, entry: ContentfulEntry, selections: SelectedOptimizations
    ) -> [(String, Double)] {
        let tenth = memoryResolves / 10
        for _ in 0..<tenth { _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections) }
        let after100k = ResidentMemory.mebibytes()
        for _ in tenth..<memoryResolves { _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections) }
        return [("rss_100k_mib", after100k), ("rss_1m_mib", ResidentMemory.mebibytes())]
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

    /// engine_start_ms and service_engine_start_ms (each with its first start). Client and
    /// service starts alternate, so both kinds meet the same machine load.
    private func engineFigures() throws -> [(String, Double)] {
        let service = OptimizationService(
            config: OptimizationConfig(clientId: "bench"), environment: .init(transport: UnconfiguredFetchTransport()))
        let serviceEngines = try OptimizationService.MeasuredEngines(of: service)
        var starts: [Double] = []
        var serviceStarts: [Double] = []
        for _ in 0..<engineStarts {
            let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
            let clientStart = DispatchTime.now().uptimeNanoseconds
            try client.initialize(config: OptimizationConfig(clientId: "bench"))
            starts.append(Double(DispatchTime.now().uptimeNanoseconds - clientStart) / 1_000_000)
            client.destroy()
            let serviceStart = DispatchTime.now().uptimeNanoseconds
            try serviceEngines.make()
            serviceStarts.append(Double(DispatchTime.now().uptimeNanoseconds - serviceStart) / 1_000_000)
            serviceEngines.closeAll()
        }
        return [
            ("engine_start_ms", percentile(starts, 0.5)), ("engine_start_first_ms", starts.first ?? 0),
            ("service_engine_start_ms", percentile(serviceStarts, 0.5)), ("service_engine_start_first_ms", serviceStarts.first ?? 0),
        ]
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
