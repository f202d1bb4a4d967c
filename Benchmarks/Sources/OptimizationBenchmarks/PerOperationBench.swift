import BenchmarkFixtures
import Dispatch
import Foundation
import JavaScriptHost
import Optimization
import OptimizationTesting

/// Per-operation figures in the units other SDKs publish (`op_*` of `optimization-bench`): for
/// each operation, nanoseconds per operation (`_ns`, the fastest of three timed runs), `malloc`
/// calls per operation (`_allocs`, every thread of the process counted, so an operation's
/// background work such as a flush counts too) and evaluations per second on one core
/// (`_per_s_per_core` = 1e9 / ns). One thread.
///
/// - `warm_resolve`: an entry resolved again for the same selections (the 2.9 KB bench entry,
///   20 selections).
/// - `cold_resolve`: a new entry revision each time (entries prepared beforehand).
/// - `event_accept`: one service `trackClick` accepted into the Insights queue (with its share
///   of the flushes to a loopback API server).
/// - `web_request_views`: what the example's events page asks of the service: `forRequest` for
///   a web request (page url and path, user agent) and three server-rendered `trackView`s: the
///   in-process counterpart of the load test's (events − handoff).
/// - `web_request_views_together`: `web_request_views` with the three views in one
///   `trackViews` (one crossing into the engine), as the example's pages send them.
/// - `personalized_request`: what a personalized page asks of the service: `forRequest`, one
///   `page()` Experience call to the loopback API server, three resolves, their three views in
///   one `trackViews`.
/// - `visitor_state_open_seal`: a sealed visitor state (profile id, consent, the 20 bench
///   selections; about 2.5 KB) opened and the opened state sealed again, as a request that reads
///   and renews the `pp_state` cookie does.
///
/// The operations are ``BenchmarkOperations``'s, which the harness's benchmarks
/// (`Benchmarks/OperationBenchmarks`) also measure. ``check(_:against:)`` compares the allocation
/// counts with a table of ceilings (`--check-allocations FILE`, per build configuration).
enum PerOperationBench {
    static func figures(entryText: String, selections: SelectedOptimizations, iterations: Int) throws -> [(String, Double)] {
        try AllocationCounter.preloadInterposer()
        var report: [(String, Double)] = []

        let client = try BenchmarkOperations.resolvingClient()
        defer { client.destroy() }
        let entry = try ContentfulEntry(jsonText: entryText)
        report += measure("warm_resolve", iterations: iterations * 10) { _ in
            _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
        }
        let fresh = try BenchmarkOperations.coldEntries(count: iterations * 4 + 200, firstRevision: 500_000)
        var next = 0
        report += measure("cold_resolve", iterations: iterations) { _ in
            _ = client.resolveOptimizedEntry(baseline: fresh[next], selectedOptimizations: selections)
            next += 1
        }

        let stateCodec = try BenchmarkOperations.visitorStateCodec()
        let sealedState = try BenchmarkOperations.sealedVisitorState(stateCodec)
        report += try measure("visitor_state_open_seal", iterations: iterations * 10) { _ in
            _ = try BenchmarkOperations.openAndSealVisitorState(sealedState, codec: stateCodec)
        }

        report += try LoopbackService.with(options: BenchmarkOperations.serviceOptions) { loopback in
            try serviceFigures(service: loopback.service, server: loopback.server, iterations: iterations)
        }
        return report
    }

    /// `event_accept` and `personalized_request` on a started service.
    private static func serviceFigures(service: OptimizationService, server: LocalOptimizationAPIServer, iterations: Int) throws -> [(String, Double)] {
        var report: [(String, Double)] = []
        report += try measureAsync("event_accept", iterations: iterations, server: server) { index in
            try await BenchmarkOperations.acceptEvent(on: service, index: index)
        }
        report += try measureAsync("web_request_views", iterations: max(1, iterations / 3), server: server) { index in
            try await BenchmarkOperations.webRequestViews(on: service, index: index)
        }
        report += try measureAsync("web_request_views_together", iterations: max(1, iterations / 3), server: server) { index in
            try await BenchmarkOperations.webRequestViewsTogether(on: service, index: index)
        }
        let page = try BenchmarkOperations.pageEntries()
        report += try measureAsync("personalized_request", iterations: max(1, iterations / 10), server: server) { index in
            try await BenchmarkOperations.personalizedRequest(on: service, page: page, index: index)
        }
        return report
    }

    /// The three figures of one synchronous operation.
    private static func measure(_ name: String, iterations: Int, _ body: (Int) throws -> Void) rethrows -> [(String, Double)] {
        for index in 0..<min(iterations, 200) { try body(index) }
        var fastest = Double.infinity
        for _ in 0..<3 {
            let start = DispatchTime.now().uptimeNanoseconds
            for index in 0..<iterations { try body(index) }
            fastest = min(fastest, Double(DispatchTime.now().uptimeNanoseconds - start) / Double(iterations))
        }
        let allocations = try AllocationCounter.count {
            for index in 0..<iterations { try body(index) }
        }
        return figures(name, nanoseconds: fastest, allocations: Double(allocations) / Double(iterations))
    }

    /// The three figures of one async operation, run in order on one task; the queue is flushed
    /// (untimed, uncounted) between runs.
    private static func measureAsync(
        _ name: String, iterations: Int, server: LocalOptimizationAPIServer, _ body: @escaping @Sendable (Int) async throws -> Void
    ) throws -> [(String, Double)] {
        let loop: @Sendable () async throws -> Void = {
            for index in 0..<iterations { try await body(index) }
        }
        try blocking { try await loop() }
        var fastest = Double.infinity
        for _ in 0..<3 {
            server.clearRecordedRequests()
            let start = DispatchTime.now().uptimeNanoseconds
            try blocking { try await loop() }
            fastest = min(fastest, Double(DispatchTime.now().uptimeNanoseconds - start) / Double(iterations))
        }
        server.clearRecordedRequests()
        let allocations = try AllocationCounter.count { try blocking { try await loop() } }
        return figures(name, nanoseconds: fastest, allocations: Double(allocations) / Double(iterations))
    }

    private static func figures(_ name: String, nanoseconds: Double, allocations: Double) -> [(String, Double)] {
        [
            ("op_\(name)_ns", nanoseconds.rounded()),
            ("op_\(name)_allocs", allocations),
            ("op_\(name)_per_s_per_core", nanoseconds > 0 ? (1e9 / nanoseconds).rounded() : 0),
        ]
    }

    /// The `_allocs` figures above their ceiling in `ceilingsFile` (`{"debug": {figure: n},
    /// "release": {…}}`, the section of this build), as messages; empty when all are within.
    static func check(_ report: [(String, Double)], against ceilingsFile: String) throws -> [String] {
        #if DEBUG
        let section = "debug"
        #else
        let section = "release"
        #endif
        let text: String
        do {
            text = try String(contentsOfFile: ceilingsFile, encoding: .utf8)
        } catch {
            throw BenchFailure("cannot read \(ceilingsFile): \(error.localizedDescription)")
        }
        guard let ceilings = (try? JSONValue(jsonText: text))?[section]?.objectValue, !ceilings.isEmpty else {
            throw BenchFailure("\(ceilingsFile) has no \"\(section)\" object of ceilings")
        }
        var failures: [String] = []
        for (name, ceiling) in ceilings {
            guard let limit = ceiling.doubleValue else { throw BenchFailure("ceiling \(name) is not a number") }
            guard let measured = report.first(where: { $0.0 == name })?.1 else {
                failures.append("\(name): not measured")
                continue
            }
            if measured > limit { failures.append("\(name): \((measured * 100).rounded() / 100) allocations per operation, ceiling \(limit)") }
        }
        return failures
    }
}
