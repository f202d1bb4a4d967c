/// How often one engine's calls crossed the boundary between Swift and JavaScript: entries into
/// JavaScript (every call, evaluation and nested call from a host function) and calls of host
/// functions from JavaScript. Plain counters guarded by the engine's lock (no atomics on the
/// call path); read with ``JavaScriptEngine/crossingCounts``.
final class BoundaryCrossings: @unchecked Sendable {
    var intoJavaScript = 0
    var intoHost = 0
}

extension JavaScriptEngine {
    /// Calls across the Swift–JavaScript boundary since the engine started: entries into
    /// JavaScript and calls of host functions. For measurements only (`optimization-bench`'s
    /// `event_crossings_*` figures; SPI `Benchmarking`).
    @_spi(Benchmarking)
    public var crossingCounts: (intoJavaScript: Int, intoHost: Int) {
        withExclusiveAccess { (crossings.intoJavaScript, crossings.intoHost) }
    }
}
