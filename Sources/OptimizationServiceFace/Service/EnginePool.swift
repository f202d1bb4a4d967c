import OptimizationServiceDelivery
import CoreMetrics
import Foundation
import HostPlatform
import Synchronization
import OptimizationEngine

/// The service's JavaScript engines: one JavaScriptCore context group each (they run in
/// parallel), every one with the shared JSRuntime loaded, the stateless bridge initialized and
/// `__service` configured. Engines hold prepared entries and selections (content), never
/// visitor state.
///
/// **Borrowing.** ``withEngine(_:)`` starts at the engine the calling thread used last (a
/// thread-local hint; the first time, one derived from the thread), passes over engines another
/// thread holds, and only waits when every engine is busy. So concurrent threads settle on
/// different engines and stay there: an engine's VM and caches stay on one core instead of
/// bouncing between threads, which costs about a third more CPU per call when they swap. Thread-safe; the lock of an engine is
/// held for one synchronous call, never across an `await`.
final class EnginePool: Sendable {
    let engines: [OptimizationRuntime]
    private let busyCount = Atomic<Int>(0)
    /// Receives the number of busy engines on every change (metrics). Nil: nothing counts them,
    /// so borrowing writes no memory shared by the engines' threads.
    private let busyGauge: Gauge?

    init(engines: [OptimizationRuntime], busyGauge: Gauge? = nil) {
        precondition(!engines.isEmpty, "an engine pool needs at least one engine")
        self.engines = engines
        self.busyGauge = busyGauge
    }

    /// Runs `body` with exclusive use of one engine.
    /// - Returns: `body`'s result and whether the caller had to wait for a busy engine.
    func withEngine<Result>(_ body: (OptimizationRuntime) throws -> Result) rethrows -> (result: Result, waited: Bool) {
        let count = engines.count
        let start = count == 1 ? 0 : Self.preferredEngine(count: count)
        for offset in 0..<count {
            let index = (start + offset) % count
            let runtime = engines[index]
            if let result = try runtime.tryExclusively({ () throws -> Result in
                markBusy(1)
                defer { markBusy(-1) }
                return try body(runtime)
            }) {
                if offset != 0 { Self.setPreferredEngine(index) }
                return (result, false)
            }
        }
        let runtime = engines[start]
        let result = try runtime.exclusively { () throws -> Result in
            markBusy(1)
            defer { markBusy(-1) }
            return try body(runtime)
        }
        return (result, true)
    }

    /// An engine for an async call (its synchronous part takes the engine's lock itself): the
    /// first one no other thread holds right now, else the calling thread's own.
    func engineForAsyncCall() -> OptimizationRuntime {
        let count = engines.count
        let start = count == 1 ? 0 : Self.preferredEngine(count: count)
        for offset in 0..<count {
            let runtime = engines[(start + offset) % count]
            if runtime.engine.tryWithExclusiveAccess({ true }) == true { return runtime }
        }
        return engines[start]
    }

    private func markBusy(_ delta: Int) {
        guard let busyGauge else { return }
        busyGauge.record(busyCount.wrappingAdd(delta, ordering: .relaxed).newValue)
    }

    /// Closes every engine (pending async calls fail with `OptimizationError/notInitialized`).
    /// A pool engine sends no HTTP request: a request's Experience call is sent by the service's
    /// Swift delivery between the engine's two calls, and `ServiceDelivery/close()` cancels it;
    /// Insights deliveries run in the service's Swift queues. Fetches an engine might still hold
    /// are cancelled all the same.
    func close() {
        for runtime in engines { runtime.close(cancellingFetches: true) }
    }

    /// The calling thread's last engine index (stored + 1; 0 = none yet), shared by every pool of
    /// the process: it is only a starting point.
    private static let preferredEngineKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    private static func preferredEngine(count: Int) -> Int {
        let stored = Int(bitPattern: pthread_getspecific(preferredEngineKey))
        return (stored > 0 ? stored - 1 : threadHint) % count
    }

    private static func setPreferredEngine(_ index: Int) {
        _ = pthread_setspecific(preferredEngineKey, UnsafeRawPointer(bitPattern: index + 1))
    }

    /// A stable, well-mixed number for the calling thread.
    private static var threadHint: Int {
        #if os(Linux)
        var bits = UInt64(pthread_self())
        #else
        var bits = UInt64(UInt(bitPattern: pthread_self()))
        #endif
        bits ^= bits >> 33
        bits &*= 0xff51_afd7_ed55_8ccd
        bits ^= bits >> 33
        return Int(truncatingIfNeeded: bits & 0x7fff_ffff)
    }
}
