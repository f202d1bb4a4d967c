import JavaScriptHost
import OptimizationEngine

// Access to the engines behind a client or a service for measurements (optimization-bench):
// boundary crossings and scripts a benchmark installs. Not for production use.

extension OptimizationClient {
    /// The client's engine (nil before `initialize` and after `destroy()`).
    package var measuredEngines: [JavaScriptEngine] {
        currentRuntime.map { [$0.engine] } ?? []
    }
}
