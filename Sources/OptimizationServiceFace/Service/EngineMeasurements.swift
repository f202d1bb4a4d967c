@_spi(Benchmarking) import JavaScriptHost
import OptimizationEngine
import OptimizationDelivery
import OptimizationContent
import OptimizationJSON
import OptimizationTransport
import Synchronization
import HostPlatform

// Access to the engines behind a service for measurements (`optimization-bench`, in the
// Benchmarks package, through SPI `Benchmarking`): boundary crossings, engine start and memory.
// Not for production use.

extension OptimizationService {
    /// Every engine of the running service (its pool: delivery runs no engine); none before
    /// `start` and after shutdown. For measurements only (SPI `Benchmarking`).
    @_spi(Benchmarking)
    public var measuredEngines: [JavaScriptEngine] {
        guard let running else { return [] }
        return running.pool.engines.map(\.engine)
    }
}

extension OptimizationService {
    /// Engines made exactly as ``start(timeout:)`` makes each engine of its pool (the service
    /// scripts, `__service.configure`), without starting the service: for the engine-start and
    /// memory figures of `optimization-bench`. For measurements only (SPI `Benchmarking`).
    @_spi(Benchmarking)
    public final class MeasuredEngines {
        private let service: OptimizationService
        private let transport: any FetchTransport
        private let owned: HTTPFetchTransport?
        private var made: [OptimizationRuntime] = []

        /// Engines of `service`, on its transport (an owned one is created here).
        public init(of service: OptimizationService) throws(OptimizationError) {
            self.service = service
            (transport, owned) = try service.makeTransport()
        }

        /// Creates one more engine and returns it (kept until ``closeAll()``).
        @discardableResult
        public func make() throws(OptimizationError) -> JavaScriptEngine {
            let runtime = try service.makeRuntime(transport: transport)
            made.append(runtime)
            return runtime.engine
        }

        /// Closes every engine made so far.
        public func closeAll() {
            for runtime in made { runtime.close(cancellingFetches: true) }
            made = []
        }

        deinit {
            closeAll()
            if let owned { Task { try? await owned.shutdown() } }
        }
    }
}
