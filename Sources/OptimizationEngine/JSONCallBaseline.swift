import JavaScriptHost
import OptimizationJSON

/// The per-call JSON pattern that `optimization bench` measures the engine against, run inside
/// this client's own engine: the entry and the selections cross as JSON text, JavaScript parses
/// both (`JSON.parse`), resolves with the shared resolver, stringifies the result, and this
/// library's JSON parser reads it back. Nothing is cached between calls (see
/// `JSRuntime/benchmarks/json-call-baseline.js`, which only this type loads, into the engine it
/// measures; production engines never carry it).
///
/// For measurement only. Thread-safe like the client (the engine's lock, one call at a time).
@_spi(Benchmarking)
public final class JSONCallBaseline: Sendable {
    private let function: JavaScriptFunction

    package init(runtime: OptimizationRuntime) throws {
        if try runtime.engine.evaluate("typeof \(BridgeContract.Benchmark.jsonCallBaseline.path)") != .string("function") {
            for script in EmbeddedJSRuntime.benchmarkScripts {
                try runtime.engine.evaluate(script.source, sourceURL: "JSRuntime/\(script.path)")
            }
        }
        function = try runtime.engine.function(BridgeContract.Benchmark.jsonCallBaseline)
    }

    /// Resolves `entryJSON` (a single entry or a CDA collection) for `selectionsJSON` (a JSON
    /// array of selections, or `null`).
    /// - Returns: `{"entry": …, "selectedOptimization"?: …, "isEmptyVariant"?: true}`.
    /// - Throws: `OptimizationError.bridgeError` when JavaScript throws (invalid JSON) or
    ///   returns something other than JSON text, or `JSONError`.
    public func resolve(entryJSON: String, selectionsJSON: String) throws -> JSONValue {
        let result: JavaScriptValue
        do {
            result = try function.call(.string(entryJSON), .string(selectionsJSON))
        } catch {
            throw OptimizationError.bridgeError("jsonCallBaseline failed: \(error)")
        }
        guard let text = result.stringValue else {
            throw OptimizationError.bridgeError("jsonCallBaseline returned no JSON text")
        }
        return try JSONValue(jsonText: text)
    }
}
