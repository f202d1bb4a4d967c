import Foundation
import JavaScriptHost
@testable import Optimization
import OptimizationEngine
import Testing

/// The contract between Swift and JSRuntime (`BridgeContract`), checked against the JavaScript
/// the library embeds, inside JavaScriptCore. The Node suite checks the same list
/// (`JSRuntime/bridge-contract.json`) under Node.
@Suite("The bridge contract")
struct BridgeContractTests {
    /// An engine with the production scripts evaluated, exactly as the library loads them.
    private func loadedEngine() throws -> JavaScriptEngine {
        let engine = try JavaScriptEngine(configuration: .init(clock: ManualClock()))
        for script in EmbeddedJSRuntime.scripts {
            try engine.evaluate(script.source, sourceURL: script.path)
        }
        return engine
    }

    private var sources: [String] { EmbeddedJSRuntime.scripts.map(\.source) }

    @Test func swiftAndTheEmbeddedJavaScriptAgree() throws {
        let engine = try loadedEngine()
        defer { engine.close() }
        #expect(BridgeContract.violations(in: engine, sources: sources) == [])
    }

    @Test func theContractFileIsTheSwiftDeclaration() throws {
        let file = repositoryRoot.appendingPathComponent("JSRuntime/bridge-contract.json")
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text == BridgeContract.jsonDescription, "JSRuntime/bridge-contract.json must read:\n\(BridgeContract.jsonDescription)")
    }

    @Test func renamingOneJavaScriptExportBreaksTheContract() throws {
        let engine = try loadedEngine()
        defer { engine.close() }
        try engine.evaluate("__bridge.getFlagValue = __bridge.getFlag; delete __bridge.getFlag;")
        let problems = BridgeContract.violations(in: engine, sources: sources)
        #expect(problems.contains { $0.hasPrefix("__bridge.getFlag/1") })
        #expect(problems.contains("__bridge.getFlagValue: exported by JavaScript, unknown to Swift"))
    }

    @Test func aChangedArityOrAnUndeclaredNativeBreaksTheContract() throws {
        let engine = try loadedEngine()
        defer { engine.close() }
        try engine.evaluate("__service.insightsSize = function (extra) { return 0; };")
        let problems = BridgeContract.violations(in: engine, sources: sources + ["globalThis.__nativeSurprise();"])
        #expect(problems.contains { $0.hasPrefix("__service.insightsSize/0") })
        #expect(problems.contains("__nativeSurprise: called by JavaScript, unknown to Swift"))
    }

    @Test func everyInstalledNativeCallbackIsInstalledOnAClientsEngine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .directory(directory)))
        try client.initialize(config: OptimizationConfig(clientId: "contract"))
        defer { client.destroy() }
        let engine = try #require(client.currentRuntime?.engine)
        for native in BridgeContract.Native.all {
            let installed = try engine.evaluate("typeof globalThis.\(native.name) === 'function'")
            #expect(installed == .bool(native.installed), "\(native)")
        }
    }

    @Test func theModuleGraphOfTheEmbeddedJavaScriptIsWhole() throws {
        let engine = try loadedEngine()
        defer { engine.close() }
        let problems = try engine.evaluate("JSON.stringify(__optimization.checkModules())").stringValue
        #expect(problems == "[]")
        let files = try engine.evaluate("JSON.stringify(__optimization.modules().map(function (m) { return m.file; }))").stringValue
        #expect(files.flatMap { try? JSONValue(jsonText: $0) } == .array(EmbeddedJSRuntime.scripts.map { .string($0.path) }))
    }
}
