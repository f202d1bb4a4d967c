import Foundation
import CJavaScriptCore
import JavaScriptHost
import Testing

/// Run these once more under GC stress (`.ci/run` does):
/// `JSC_forceGCSlowPaths=true JSC_slowPathAllocsBetweenGCs=50`.
@Suite("Memory safety")
struct MemorySafetyTests {
    @Test func privateJavaScriptCoreSymbolsResolve() {
        // Declared in shim.h, exported by the library without installed headers.
        let symbols: [Any] = [
            JSContextGroupSetExecutionTimeLimit as Any, JSContextGroupClearExecutionTimeLimit as Any,
            JSSynchronousGarbageCollectForDebugging as Any, JSGetMemoryUsageStatistics as Any,
        ]
        #expect(symbols.count == 4)
    }

    @Test func protectAndUnprotectBalanceAcrossManyCalls() throws {
        let engine = try JavaScriptEngine()
        try engine.evaluate("globalThis.merge = (a, b, c) => ({...a, b, c: c.length});")
        let handle = try engine.function("merge")
        engine.collectGarbage()
        let before = try engine.memoryStatistics().protectedObjectCount
        for index in 0..<2_000 {
            _ = try handle.call(.json(#"{"x":[1,2,{"y":"z"}]}"#), .string("s\(index)"), .json("[1,2,3]"))
            _ = try engine.call("merge", .json("{}"), .null, .string("abc"))
        }
        engine.collectGarbage()
        #expect(try engine.memoryStatistics().protectedObjectCount == before)
    }

    @Test func functionHandlesUnprotectWhenReleased() throws {
        let engine = try JavaScriptEngine()
        try engine.evaluate("globalThis.f = () => 1")
        let before = try engine.memoryStatistics().protectedObjectCount
        do {
            let handles = try (0..<10).map { _ in try engine.function("f") }
            #expect(try engine.memoryStatistics().protectedObjectCount > before)
            _ = try handles.map { try $0.call() }
        }
        #expect(try engine.memoryStatistics().protectedObjectCount == before)
    }

    @Test func argumentsSurviveCollectionsBetweenTheirCreation() throws {
        // Many arguments, each allocating: a GC between two of them must not free the first.
        let engine = try JavaScriptEngine()
        try engine.evaluate("globalThis.sum = (...xs) => xs.map(x => JSON.stringify(x)).join('|');")
        let arguments: [JavaScriptValue] = (0..<16).map { .json(#"{"k":"value \#($0)","a":[\#($0)]}"#) }
        for _ in 0..<200 {
            let result = try engine.call("sum", arguments: arguments)
            #expect(result.stringValue?.components(separatedBy: "|").count == 16)
        }
    }

    @Test func nativeFunctionsSurviveGarbageCollection() throws {
        let engine = try JavaScriptEngine()
        try engine.registerFunction("twice") { .number(($0.first?.numberValue ?? 0) * 2) }
        for _ in 0..<3 { engine.collectGarbage() }
        #expect(try engine.evaluate("[1,2,3].map(x => twice(x)).join()") == .string("2,4,6"))
    }

    /// JavaScriptCore's own full collections hang off a run-loop timer that never fires on the
    /// engine's threads; the engine runs one itself every `fullCollectionInterval` outermost
    /// calls, so garbage that nothing allocates past is freed. (No allocation happens between
    /// the calls, so nothing else would collect the probe.)
    @Test(arguments: [50, nil] as [Int?])
    func theEngineRunsAFullCollectionEveryIntervalCalls(interval: Int?) throws {
        let engine = try JavaScriptEngine(configuration: .init(fullCollectionInterval: interval))
        defer { engine.close() }
        try engine.evaluate("""
            globalThis.probe = new WeakRef({ payload: new Array(10000).fill(7) });
            globalThis.noop = function () {};
            """)
        // Under CI's GC-stress settings JavaScriptCore itself collects every few allocations, so
        // only the forced collection's effect can be asserted there, not that the probe survives.
        let collectorStressed = ProcessInfo.processInfo.environment["JSC_slowPathAllocsBetweenGCs"] != nil
        for _ in 0..<20 { try engine.call("noop") }
        if !collectorStressed {
            #expect(try engine.evaluate("probe.deref() !== undefined") == .bool(true))
        }
        for _ in 0..<60 { try engine.call("noop") }
        let collected = try engine.evaluate("probe.deref() === undefined") == .bool(true)
        if interval != nil {
            #expect(collected)
        } else if !collectorStressed {
            #expect(!collected)
        }
    }

    @Test func manyEnginesCanBeCreatedAndClosed() throws {
        for _ in 0..<20 {
            let engine = try JavaScriptEngine()
            #expect(try engine.evaluate("typeof __nativeNow") == .string("function"))
            engine.close()
        }
    }
}
