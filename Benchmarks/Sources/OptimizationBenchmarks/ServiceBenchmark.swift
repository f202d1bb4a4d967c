import BenchmarkFixtures
import Dispatch
import Foundation
import JavaScriptHost
import Optimization
import OptimizationTesting
import Synchronization

/// The request-scoped service's figures for `optimization bench`: pool scaling across
/// threads sharing one prepared entry, CPU per call, memory per engine, a `forRequest` +
/// `page()` round trip against a loopback API answering at once (the Insights accept rates are
/// ``InsightsThroughputBench``'s).
enum ServiceBenchmark {
    static func run(entry: ContentfulEntry, selections: SelectedOptimizations, resolves: Int) throws -> [(String, Double)] {
        try LoopbackService.with(options: .init(engines: 2)) { loopback in
            try figures(service: loopback.service, entry: entry, selections: selections, resolves: resolves)
        }
    }

    private static func figures(
        service: OptimizationService, entry: ContentfulEntry, selections: SelectedOptimizations, resolves: Int
    ) throws -> [(String, Double)] {
        var report: [(String, Double)] = [("pool_engines", Double(service.engineCount))]
        // Both engines hold the entry before timing.
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for _ in 0..<2_000 { _ = service.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections) }
        }
        // One and two threads alternately, three times each; the fastest run of each counts (noise
        // from other processes only ever slows a run down).
        var ones: [ThreadTiming] = []
        var twos: [ThreadTiming] = []
        for _ in 0..<3 {
            ones.append(measureThreads(1, resolves: resolves) { _ = service.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections) })
            twos.append(measureThreads(2, resolves: resolves) { _ = service.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections) })
        }
        let one = ones.min { $0.wallSeconds < $1.wallSeconds }!
        let two = twos.min { $0.wallSeconds < $1.wallSeconds }!
        let perSecond1 = Double(resolves) / one.wallSeconds
        let perSecond2 = Double(2 * resolves) / two.wallSeconds
        report += [
            ("pool_threads_1_resolves_per_s", perSecond1.rounded()),
            ("pool_threads_2_resolves_per_s", perSecond2.rounded()),
            ("pool_scaling_2", perSecond2 / perSecond1),
            ("pool_shared_entry_cpu_ratio", (two.cpuSeconds / Double(2 * resolves)) / (one.cpuSeconds / Double(resolves))),
        ]
        report.append(("engine_rss_mib", try engineMemory()))

        let roundTrips = try blocking { () async throws -> [Double] in
            var samples: [Double] = []
            for index in 0..<320 {
                let request = service.forRequest(RequestOptions(consent: true, profileId: "bench-\(index % 16)"))
                let start = DispatchTime.now().uptimeNanoseconds
                _ = try await request.page()
                if index >= 20 { samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000) }
            }
            return samples
        }
        report.append(("request_page_p50_us", roundTrips.sorted()[roundTrips.count / 2]))

        return report
    }

    private struct ThreadTiming {
        var wallSeconds: Double
        var cpuSeconds: Double
    }

    /// Runs `resolves` calls of `body` on each of `threads` threads at once.
    private static func measureThreads(_ threads: Int, resolves: Int, _ body: @escaping @Sendable () -> Void) -> ThreadTiming {
        let cpu = Mutex<Double>(0)
        let start = DispatchTime.now().uptimeNanoseconds
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            let before = threadCPUSeconds()
            for _ in 0..<resolves { body() }
            let used = threadCPUSeconds() - before
            cpu.withLock { $0 += used }
        }
        let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return ThreadTiming(wallSeconds: wall, cpuSeconds: cpu.withLock { $0 })
    }

    private static func threadCPUSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// RSS growth per extra engine: a second service with four more engines (plus its delivery
    /// engine), measured after start.
    private static func engineMemory() throws -> Double {
        let before = residentMiB()
        let service = OptimizationService(
            config: OptimizationConfig(clientId: "bench"), options: .init(engines: 4),
            environment: .init(transport: UnconfiguredFetchTransport()))
        try blocking { try await service.start() }
        let after = residentMiB()
        blockingUntilDone { await service.shutdown() }
        return (after - before) / 5
    }

    static func residentMiB() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }
}
