import BenchmarkFixtures
import Dispatch
import Foundation
import Optimization
import OptimizationTesting
import Synchronization

/// How many Insights events per second a service accepts (`insights_*` figures of
/// `optimization bench`): each event is one `forRequest` + `trackClick` for one of 100 visitors
/// per thread, accepted into the service's Insights queue, which flushes to a loopback API server
/// in the same process while the threads run (its CPU counts). One thread and two threads
/// alternately, three times each; the fastest run of each counts (noise from other processes
/// only ever slows a run down). `insights_scaling_2` is the two-thread rate over the one-thread
/// rate of the same run.
enum InsightsThroughputBench {
    static func figures(eventsPerThread: Int) throws -> [(String, Double)] {
        try LoopbackService.with(options: .init(engines: 2, insightsMaxEvents: 1_000_000)) { loopback in
            try figures(service: loopback.service, server: loopback.server, eventsPerThread: eventsPerThread)
        }
    }

    private static func figures(
        service: OptimizationService, server: LocalOptimizationAPIServer, eventsPerThread: Int
    ) throws -> [(String, Double)] {
        // Warm-up: both engines and the queue's paths.
        _ = try run(service: service, server: server, threads: 2, eventsPerThread: min(eventsPerThread, 2_000), round: -1)
        var ones: [Double] = []
        var twos: [Double] = []
        for round in 0..<3 {
            ones.append(try run(service: service, server: server, threads: 1, eventsPerThread: eventsPerThread, round: round))
            twos.append(try run(service: service, server: server, threads: 2, eventsPerThread: eventsPerThread, round: round))
        }
        let one = ones.max() ?? 0
        let two = twos.max() ?? 0
        return [
            ("insights_events_per_s", two.rounded()),
            ("insights_threads_1_events_per_s", one.rounded()),
            ("insights_threads_2_events_per_s", two.rounded()),
            ("insights_scaling_2", one > 0 ? two / one : 0),
        ]
    }

    /// Events per second of `threads` tasks sending `eventsPerThread` events each; the queue is
    /// flushed (untimed) afterwards and the server's recorded requests cleared, so every run
    /// starts empty.
    private static func run(service: OptimizationService, server: LocalOptimizationAPIServer, threads: Int, eventsPerThread: Int, round: Int) throws -> Double {
        let started = DispatchTime.now().uptimeNanoseconds
        try blocking {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<threads {
                    group.addTask {
                        for index in 0..<eventsPerThread {
                            let request = service.forRequest(RequestOptions(consent: true, profileId: "visitor-\(round)-\(worker)-\(index % 100)"))
                            let result = try await request.trackClick(TrackClickPayload(componentId: "hero", variantIndex: 1))
                            guard result.outcome == .accepted else { throw BenchFailure("trackClick was not accepted: \(result.outcome)") }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        blockingUntilDone { await service.flush() }
        server.clearRecordedRequests()
        return Double(threads * eventsPerThread) / seconds
    }
}
