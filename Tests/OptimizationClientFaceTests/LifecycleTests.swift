import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import Testing

@Suite("Client lifecycle", .serialized)
struct LifecycleTests {
    /// Resident memory in bytes and the number of threads of this process (Linux /proc).
    static func processFigures() -> (residentBytes: Int, threads: Int) {
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = Int(statm.split(separator: " ").dropFirst().first ?? "0") ?? 0
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let threads = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
            .flatMap { Int($0.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        return (pages * Int(sysconf(Int32(_SC_PAGESIZE))), threads)
    }

    @Test func destroyThenInitializeAThousandTimesLeaksNoEngineTimerOrThread() throws {
        let clock = ManualClock()
        let client = OptimizationClient(environment: .init(clock: clock, transport: UnconfiguredFetchTransport(), storage: .disabled))
        let entry = try ContentfulEntry(jsonData: fixtureData("entries/hero-optimized.json"))
        let selections = try SelectedOptimizations(jsonData: fixtureData("selections/new-visitor.json"))
        func cycle() throws {
            try client.initialize(config: OptimizationConfig(clientId: "lifecycle", defaults: StorageDefaults(consent: true)))
            _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
            client.setOnline(false)
            // Leaves timers and queued work behind for destroy() to cancel.
            client.submitView(TrackViewPayload(componentId: "c", viewId: "v", viewDuration: .milliseconds(1)))
            weak var engine = client.currentRuntime?.engine
            #expect(engine != nil)
            client.destroy()
            #expect(clock.pendingTimerCount == 0)
            // Nothing keeps the destroyed engine (its JavaScript context, timers, callbacks) alive.
            #expect(engine == nil, "the destroyed engine is still referenced")
        }
        for _ in 0..<50 { try cycle() }  // warm up allocator and JIT caches
        let start = Self.processFigures()
        for _ in 0..<1_000 { try cycle() }
        let end = Self.processFigures()
        print("lifecycle: 1,000 destroy/initialize cycles: RSS \(start.residentBytes / 1_048_576) → \(end.residentBytes / 1_048_576) MiB, threads \(start.threads) → \(end.threads)")
        // Every cycle's engine is gone (checked above, independent of the suites running in
        // parallel). The resident size is process-wide and moves with those suites (services
        // start pools of engines), so it only bounds a gross leak: 1,000 leaked engines would be
        // ~1 GiB.
        #expect(end.residentBytes - start.residentBytes < 900 * 1024 * 1024,
                "RSS grew by \((end.residentBytes - start.residentBytes) / 1024 / 1024) MiB")
        // Other suites run in parallel and start or stop threads meanwhile (a service starts its
        // engines on threads of their own); one leaked thread per cycle would add 1,000.
        #expect(end.threads <= start.threads + 200, "threads \(start.threads) → \(end.threads)")
        #expect(!client.isInitialized)
    }

    @Test func initializeReplacesARunningEngineAndKeepsStreams() async throws {
        let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
        try client.initialize(config: OptimizationConfig(clientId: "a"))
        let first = try #require(client.currentRuntime)
        let states = client.stateChanges
        try client.initialize(config: OptimizationConfig(clientId: "b", defaults: StorageDefaults(consent: true)))
        #expect(first.engine.isClosed)
        var iterator = states.makeAsyncIterator()
        #expect(await iterator.next()?.consent == true)
    }
}
