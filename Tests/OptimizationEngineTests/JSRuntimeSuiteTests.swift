import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
@testable import OptimizationEngine
import Testing

/// Runs JSRuntime's own JavaScript unit tests (the ones `node --test` runs) inside JavaScriptCore,
/// on the very scripts embedded in the library.
@Suite("JSRuntime unit tests inside JavaScriptCore")
struct JSRuntimeSuiteTests {
    static let runtimeDirectory = repositoryRoot.appendingPathComponent("JSRuntime")

    @Test func embeddedScriptsAreTheManifestRolesInTheComputedLoadOrder() throws {
        let manifestText = try String(contentsOf: Self.runtimeDirectory.appendingPathComponent("manifest.json"), encoding: .utf8)
        let roles = try JSONValue(jsonText: manifestText)
        func files(_ role: String) -> Set<String> { Set(roles[role]?.arrayValue?.compactMap(\.stringValue) ?? []) }
        // Each engine kind: its role's files and (some of) the core files, nothing of the other role.
        let client = Set(EmbeddedJSRuntime.clientScripts.map(\.path))
        let service = Set(EmbeddedJSRuntime.serviceScripts.map(\.path))
        #expect(client.isSuperset(of: files("client")) && client.isSubset(of: files("core").union(files("client"))))
        #expect(service.isSuperset(of: files("service")) && service.isSubset(of: files("core").union(files("service"))))
        #expect(Set(EmbeddedJSRuntime.scripts.map(\.path)) == files("core").union(files("client")).union(files("service")))
        for script in EmbeddedJSRuntime.scripts {
            let onDisk = try String(contentsOf: Self.runtimeDirectory.appendingPathComponent(script.path), encoding: .utf8)
            #expect(script.source.trimmingCharacters(in: .newlines) == onDisk.trimmingCharacters(in: .newlines), "\(script.path)")
        }
        // The embedded order is load-order.js's answer for the files on disk.
        let engine = try JavaScriptEngine(configuration: .init(clock: ManualClock()))
        defer { engine.close() }
        let loadOrder = try String(contentsOf: Self.runtimeDirectory.appendingPathComponent("load-order.js"), encoding: .utf8)
        try engine.evaluate(loadOrder, sourceURL: "load-order.js")
        let sources = JSONValue.object(.init(uniqueKeysWithValues: EmbeddedJSRuntime.scripts.map { ($0.path, JSONValue.string($0.source)) }))
        let answer = try engine.evaluate("JSON.stringify(__loadOrder.loadOrder(\(manifestText), \(try sources.jsonText())))")
        let order = try JSONValue(jsonText: answer.stringValue ?? "")
        #expect(order["client"] == .array(EmbeddedJSRuntime.clientScripts.map { .string($0.path) }))
        #expect(order["service"] == .array(EmbeddedJSRuntime.serviceScripts.map { .string($0.path) }))
        #expect(order["all"] == .array(EmbeddedJSRuntime.scripts.map { .string($0.path) }))
        #expect(EmbeddedJSRuntime.scripts.first?.path == "core/namespace.js")
    }

    @Test func everyJavaScriptUnitTestPassesInJavaScriptCore() throws {
        let engine = try JavaScriptEngine(configuration: .init(clock: ManualClock()))
        defer { engine.close() }
        let listURL = Self.runtimeDirectory.appendingPathComponent("tests/js-test-files.json")
        let testFiles = try JSONValue(jsonData: Data(contentsOf: listURL)).arrayValue?.compactMap(\.stringValue) ?? []
        #expect(testFiles.first == "fake-host.js")
        func evaluateTestFile(_ file: String) throws {
            let source = try String(contentsOf: Self.runtimeDirectory.appendingPathComponent("tests/\(file)"), encoding: .utf8)
            try engine.evaluate(source, sourceURL: "tests/\(file)")
        }
        // The deterministic fake host replaces the real bindings first, then the embedded
        // runtime loads exactly as the library loads it, then the harness and the specs.
        try evaluateTestFile("fake-host.js")
        for script in EmbeddedJSRuntime.scripts {
            try engine.evaluate(script.source, sourceURL: script.path)
        }
        // Benchmark-only scripts are tested too (production engines never load them).
        for script in EmbeddedJSRuntime.benchmarkScripts {
            try engine.evaluate(script.source, sourceURL: script.path)
        }
        for file in testFiles.dropFirst() { try evaluateTestFile(file) }
        let report = ReportBox()
        try engine.registerFunction("__reportJsTests") { arguments in
            report.set(arguments.first?.stringValue)
            return .undefined
        }
        // Promise jobs drain when this outermost call returns; the fake host's timers are manual.
        try engine.evaluate("__runJsTests(__reportJsTests)")
        let text = try #require(report.value, "the JS suite did not finish synchronously")
        let results = try JSONValue(jsonText: text).arrayValue ?? []
        #expect(results.count >= 30)
        for result in results where result["ok"]?.boolValue != true {
            Issue.record("JS test failed in JavaScriptCore: \(result["name"]?.stringValue ?? "?"): \(result["message"]?.stringValue ?? "")")
        }
    }
}

private final class ReportBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: String?
    var value: String? { lock.withLock { stored } }
    func set(_ value: String?) { lock.withLock { stored = value } }
}

@Suite("Production engines carry no benchmark code")
struct ProductionEngineContentsTests {
    @Test func theJSONCallBaselineIsLoadedOnlyByTheBenchmark() throws {
        #expect(!EmbeddedJSRuntime.scripts.contains { $0.path.contains("json-call-baseline") })
        #expect(EmbeddedJSRuntime.benchmarkScripts.map(\.path) == ["benchmarks/json-call-baseline.js"])
        let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
        try client.initialize(config: OptimizationConfig(clientId: "c"))
        defer { client.destroy() }
        let engine = try #require(client.currentRuntime?.engine)
        #expect(try engine.evaluate("typeof __optimization.jsonCallBaseline") == .string("undefined"))
    }
}
