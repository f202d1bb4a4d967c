import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
@testable import OptimizationEngine
import Testing

/// The contract between Swift and JSRuntime (`BridgeContract`, generated from
/// `JSRuntime/bridge-contract.json`), checked against that file and against the JavaScript the
/// library embeds, inside JavaScriptCore. The Node suite checks the same file under Node.
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

    /// The generated lists hold exactly the file's entries, in its order: a generator that dropped,
    /// renamed, reordered or miscounted an entry fails here (the file is read independently of the
    /// generator).
    @Test func theGeneratedListsAreTheContractFile() throws {
        let contract = try ContractFile()
        let generated: [String: [BridgeFunction]] = [
            "Visitor": BridgeContract.Visitor.all, "Service": BridgeContract.Service.all, "Host": BridgeContract.Host.all,
            "Global": BridgeContract.Global.all, "Benchmark": BridgeContract.Benchmark.all,
        ]
        #expect(contract.objects.map(\.swift).sorted() == generated.keys.sorted())
        for object in contract.objects {
            #expect(generated[object.swift]?.map(\.description) == object.functions.map(\.description), "\(object.swift)")
            #expect(generated[object.swift]?.allSatisfy { $0.object == object.object } == true, "\(object.swift)")
        }
        #expect(BridgeContract.functions.map(\.description) == contract.objects.filter { !$0.benchmark }.flatMap(\.functions).map(\.description))
        // The closed objects, whose every key `violations(in:sources:)` checks.
        #expect(contract.objects.filter(\.closed).map(\.swift) == ["Visitor", "Service"])
        #expect(BridgeContract.Native.all.map(\.name) == contract.natives.map(\.name))
        #expect(BridgeContract.Native.all.map(\.installed) == contract.natives.map(\.installed))
        #expect(BridgeContract.Native.hostBindings.map(\.name) == contract.natives.filter(\.hostBinding).map(\.name))
        let events = try #require(contract.objects.first { $0.swift == "Visitor" }).functions.filter(\.event)
        #expect(EventMethod.allCases.map { BridgeContract.Visitor.function(for: $0).description } == events.map(\.description))
    }

    /// The parts of the contract JavaScriptHost declares itself (it knows nothing about
    /// optimization): the host bindings every engine installs and the callbacks it calls.
    @Test func javaScriptHostsBindingsAndCallbacksAreTheContracts() {
        #expect(BridgeContract.Native.hostBindings.map(\.name) == HostBinding.allCases.map(\.rawValue))
        #expect(BridgeContract.Global.all.map(\.description) == ScriptCallback.allCases.map { "\($0.rawValue)/\($0.arity)" })
    }

    @Test func theBenchmarkScriptHasTheBenchmarkFunctions() throws {
        let engine = try loadedEngine()
        defer { engine.close() }
        for script in EmbeddedJSRuntime.benchmarkScripts {
            try engine.evaluate(script.source, sourceURL: script.path)
        }
        for function in BridgeContract.Benchmark.all {
            let arity = try engine.evaluate("typeof \(function.path) === 'function' ? \(function.path).length : -1")
            #expect(arity == .number(Double(function.arity)), "\(function)")
        }
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
        try engine.evaluate("__service.getFlag = function (name) { return 'null'; };")
        let problems = BridgeContract.violations(in: engine, sources: sources + ["globalThis.__nativeSurprise();"])
        #expect(problems.contains { $0.hasPrefix("__service.getFlag/2") })
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

/// The contract's checks, for the tests only: production engines never run them.
extension BridgeContract {
    /// What in `engine` (with JSRuntime's scripts evaluated, `sources` their texts) breaks the
    /// contract: a declared function missing or with another arity, a `__bridge` or `__service`
    /// key the contract does not declare, a native callback the scripts name that the contract
    /// does not declare (or the reverse), a request event method either side lacks. Empty when
    /// the two sides agree.
    static func violations(in engine: JavaScriptEngine, sources: [String]) -> [String] {
        var problems: [String] = []
        for function in functions {
            let arity = try? engine.evaluate("typeof \(function.path) === 'function' ? \(function.path).length : -1")
            if arity != .number(Double(function.arity)) {
                problems.append("\(function): JavaScript has \(arity.map { "\($0)" } ?? "nothing")")
            }
        }
        for (object, declared) in [(Visitor.initialize.object, Visitor.all), (Service.configure.object, Service.all)] {
            let keys = strings(engine, "typeof \(object) === 'object' ? Object.keys(\(object)) : []")
            for key in keys where !declared.contains(where: { $0.name == key }) {
                problems.append("\(object).\(key): exported by JavaScript, unknown to Swift")
            }
        }
        var named = Set<String>()
        for source in sources {
            var rest = source[...]
            while let range = rest.range(of: "__native") {
                let name = rest[range.lowerBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                if name.count > "__native".count { named.insert(String(name)) }
                rest = rest[range.upperBound...]
            }
        }
        let declaredNatives = Set(Native.all.map(\.name))
        for name in named.subtracting(declaredNatives).sorted() { problems.append("\(name): called by JavaScript, unknown to Swift") }
        for name in declaredNatives.subtracting(named).sorted() { problems.append("\(name): declared by Swift, never called by JavaScript") }
        let methods = strings(engine, "__optimization.requestEventMethods || []")
        if Set(methods) != Set(EventMethod.allCases.map(\.rawValue)) {
            problems.append("request event methods: JavaScript \(methods.sorted()), Swift \(EventMethod.allCases.map(\.rawValue).sorted())")
        }
        return problems
    }

    /// The strings of the JavaScript array `expression` evaluates to in `engine` (empty on failure).
    private static func strings(_ engine: JavaScriptEngine, _ expression: String) -> [String] {
        (try? engine.evaluate("JSON.stringify(\(expression))"))?.stringValue
            .flatMap { try? JSONValue(jsonText: $0).arrayValue }?.compactMap(\.stringValue) ?? []
    }
}

/// `JSRuntime/bridge-contract.json` as the tests read it, apart from the generator: each
/// function as `path/arity` (the arity is the number of its parameters).
private struct ContractFile {
    struct Function {
        let description: String
        let event: Bool
    }

    struct Object {
        let object: String
        let swift: String
        let closed: Bool
        let benchmark: Bool
        let functions: [Function]
    }

    struct Native {
        let name: String
        let installed: Bool
        let hostBinding: Bool
    }

    let objects: [Object]
    let natives: [Native]

    init() throws {
        let file = repositoryRoot.appendingPathComponent("JSRuntime/bridge-contract.json")
        let json = try JSONValue(jsonText: String(contentsOf: file, encoding: .utf8))
        objects = try #require(json["objects"]?.arrayValue).map { object in
            let name = try #require(object["object"]?.stringValue)
            return Object(
                object: name, swift: try #require(object["swift"]?.stringValue), closed: object["closed"]?.boolValue ?? false,
                benchmark: object["benchmark"]?.boolValue ?? false,
                functions: try #require(object["functions"]?.arrayValue).map { function in
                    let functionName = try #require(function["name"]?.stringValue)
                    let arity = try #require(function["params"]?.arrayValue).count
                    let path = name == "globalThis" ? functionName : "\(name).\(functionName)"
                    return Function(description: "\(path)/\(arity)", event: function["event"]?.boolValue ?? false)
                })
        }
        natives = try #require(json["natives"]?["functions"]?.arrayValue).map { native in
            Native(
                name: try #require(native["name"]?.stringValue), installed: native["installed"]?.boolValue ?? true,
                hostBinding: native["hostBinding"]?.boolValue ?? false)
        }
    }
}
