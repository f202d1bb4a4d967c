import OptimizationContent
import OptimizationEngine

@_spi(Benchmarking) import OptimizationEngine

// Entry points for `optimization-bench` only (SPI `Benchmarking`): the JSON-call baseline and
// the engine path without the memo.
extension OptimizationClient {
    /// A `JSONCallBaseline` on this client's engine.
    /// - Throws: `OptimizationError/notInitialized` before ``initialize(config:)``.
    @_spi(Benchmarking)
    public func makeJSONCallBaseline() throws -> JSONCallBaseline {
        guard let runtime = currentRuntime else { throw OptimizationError.notInitialized }
        do {
            return try JSONCallBaseline(runtime: runtime)
        } catch {
            throw OptimizationError.bridgeError("\(error)")
        }
    }

    /// `resolveOptimizedEntry(baseline:selectedOptimizations:)` without the runtime's memo of
    /// answers: every call runs the shared resolver in the engine (the benchmark's engine-path
    /// figure). Context registration and fallbacks are as usual.
    @_spi(Benchmarking)
    public func resolveOptimizedEntryInEngine(baseline: ContentfulEntry, selectedOptimizations: SelectedOptimizations?) -> ResolvedOptimizedEntry {
        guard let runtime = currentRuntime else { return ResolvedOptimizedEntry(entry: baseline.renderedBaseline) }
        return runtime.resolveReportingOutcome(baseline, selections: selectedOptimizations ?? runtime.channel.selections.current, memoized: false).resolved
    }
}
