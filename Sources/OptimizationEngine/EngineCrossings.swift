// Crossing counts summed over several engines: the figures of a benchmark that measures a whole
// client or service (SPI `Benchmarking` of JavaScriptHost).
@_spi(Benchmarking) import JavaScriptHost

extension Array where Element == JavaScriptEngine {
    /// Crossings summed over the engines.
    package var crossingCounts: (intoJavaScript: Int, intoHost: Int) {
        reduce((0, 0)) { sum, engine in
            let counts = engine.crossingCounts
            return (sum.0 + counts.intoJavaScript, sum.1 + counts.intoHost)
        }
    }
}
