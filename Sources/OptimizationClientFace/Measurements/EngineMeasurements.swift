import JavaScriptHost
import OptimizationEngine

// Access to the engine behind a client for measurements (`optimization-bench`, in the Benchmarks
// package, through SPI `Benchmarking`): boundary crossings and scripts a benchmark installs. Not
// for production use.

extension OptimizationClient {
    /// The client's engine: one element, none before `initialize` and after `destroy()`. For
    /// measurements only (SPI `Benchmarking`).
    @_spi(Benchmarking)
    public var measuredEngines: [JavaScriptEngine] {
        currentRuntime.map { [$0.engine] } ?? []
    }
}
