import JavaScriptHost
import OptimizationEngine
import EventOutbox
import OptimizationContent
import OptimizationJSON
import OptimizationTransport
import Synchronization

// Access to the engines behind a client or a service for measurements (optimization-bench):
// boundary crossings and scripts a benchmark installs. Not for production use.

extension OptimizationClient {
    /// The client's engine (nil before `initialize` and after `destroy()`).
    package var measuredEngines: [JavaScriptEngine] {
        currentRuntime.map { [$0.engine] } ?? []
    }
}

extension OptimizationService {
    /// Every engine of the running service: the pool's, then the delivery shards'.
    package var measuredEngines: [JavaScriptEngine] {
        guard let running else { return [] }
        return running.pool.engines.map(\.engine) + running.delivery.shards.map(\.runtime.engine)
    }
}

extension Array where Element == JavaScriptEngine {
    /// Crossings summed over the engines.
    package var crossingCounts: (intoJavaScript: Int, intoHost: Int) {
        reduce((0, 0)) { sum, engine in
            let counts = engine.crossingCounts
            return (sum.0 + counts.intoJavaScript, sum.1 + counts.intoHost)
        }
    }
}
