import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
@testable import OptimizationEngine
import Testing

@Suite("Resolution through OptimizationClient")
struct ResolutionTests {
    static let hero = "entries/hero-optimized.json"

    @Test func beforeInitializeAndAfterDestroyTheBaselineIsReturned() throws {
        let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
        let entry = try ContentfulEntry(jsonData: fixtureData(Self.hero))
        let selections = try SelectedOptimizations(jsonData: fixtureData("selections/new-visitor.json"))
        let before = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
        #expect(before.entryId == entry.id)
        #expect(before.selectedOptimization == nil && before.optimizationContextId == nil && !before.isEmptyVariant)
        try client.initialize(config: OptimizationConfig(clientId: "c"))
        #expect(client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).entryId != entry.id)
        client.destroy()
        #expect(!client.isInitialized)
        #expect(client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).entryId == entry.id)
    }

    @Test func numbersStringsAndNestingRoundTripExactly() throws {
        let client = try makeClient()
        let data = try fixtureData("entries/roundtrip-exact.json")
        let original = try JSONValue(jsonData: data)
        let entry = try ContentfulEntry(jsonData: data)
        let resolved = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: .empty)
        #expect(resolved.entry == original)
        let text = try resolved.jsonValue.jsonText()
        for literal in ["12345", "0.1", "9007199254740993", "123456789012345678901234567890", "1e-7"] {
            #expect(text.contains(literal), "\(literal) did not survive")
        }
        let reparsed = try JSONValue(jsonText: text)
        #expect(reparsed["entry"] == original)
        #expect(text.contains("\\u2028") && reparsed.description.contains("\\u2029"))
    }

    @Test func theSameEntryIsTransferredToTheEngineOnlyOnce() throws {
        let client = try makeClient()
        let entry = try ContentfulEntry(jsonData: fixtureData(Self.hero))
        let selections = try SelectedOptimizations(jsonData: fixtureData("selections/new-visitor.json"))
        let runtime = try #require(client.currentRuntime)
        let before = runtime.transfers
        for _ in 0..<100 { _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections) }
        #expect(runtime.transfers.entries - before.entries == 1)
        #expect(runtime.transfers.selections - before.selections == 1)
        // An equal entry parsed again has the same content key: no new transfer either.
        let again = try ContentfulEntry(jsonData: fixtureData(Self.hero))
        _ = client.resolveOptimizedEntry(baseline: again, selectedOptimizations: selections)
        #expect(runtime.transfers.entries - before.entries == 1)
    }

    @Test func engineCacheEvictionIsRecoveredTransparently() throws {
        let client = try makeClient(OptimizationConfig(clientId: "c", entryCacheSize: 2))
        let entries = try (0..<5).map { _ in try ContentfulEntry(jsonData: fixtureData(Self.hero)) }
            + [try ContentfulEntry(jsonData: fixtureData("entries/roundtrip-exact.json"))]
        let selections = try SelectedOptimizations(jsonData: fixtureData("selections/new-visitor.json"))
        let expected = client.resolveOptimizedEntry(baseline: entries[0], selectedOptimizations: selections).entryId
        for round in 0..<3 {
            for entry in entries.shuffled() {
                let result = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
                if entry.id == entries[0].id { #expect(result.entryId == expected, "round \(round)") }
            }
        }
    }

    @Test func everyResolutionGetsItsOwnContextId() throws {
        let client = try makeClient()
        let entry = try ContentfulEntry(jsonData: fixtureData(Self.hero))
        let selections = try SelectedOptimizations(jsonData: fixtureData("selections/new-visitor.json"))
        let ids = (0..<50).compactMap { _ in
            client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).optimizationContextId
        }
        #expect(ids.count == 50 && Set(ids).count == 50)
    }

    @Test func jsonValueConvenienceNeverThrowsAndFallsBackForNonEntries() throws {
        let client = try makeClient()
        let notAnEntry: JSONValue = ["hello": "world"]
        #expect(client.resolveOptimizedEntry(baseline: notAnEntry).entry == notAnEntry)
        #expect(client.resolveOptimizedEntry(baseline: .array([1, 2])).entry == .array([1, 2]))
        let hero = try JSONValue(jsonData: fixtureData(Self.hero))
        let selections = try JSONValue(jsonData: fixtureData("selections/new-visitor.json"))["data"]?["experiences"]?.arrayValue
        #expect(client.resolveOptimizedEntry(baseline: hero, selectedOptimizations: selections).entryId
            == client.resolveOptimizedEntry(baseline: try ContentfulEntry(json: hero),
                                            selectedOptimizations: try SelectedOptimizations(selections ?? [])).entryId)
    }

    @Test func concurrentResolutionFromManyThreadsIsConsistent() async throws {
        let client = try makeClient()
        let entry = try ContentfulEntry(jsonData: fixtureData(Self.hero))
        let selections = try SelectedOptimizations(jsonData: fixtureData("selections/new-visitor.json"))
        let expected = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).entryId
        let results = await withTaskGroup(of: [String?].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<300).map { _ in client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).entryId }
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(results.count == 2_400 && results.allSatisfy { $0 == expected })
    }

    @Test func invalidConfigurationIsATypedError() {
        let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
        #expect(throws: OptimizationError.self) { try client.initialize(config: OptimizationConfig(clientId: "c", locale: "*")) }
        #expect(throws: OptimizationError.configError("spaceId (or clientId) must not be empty")) {
            try client.initialize(config: OptimizationConfig(clientId: ""))
        }
        #expect(!client.isInitialized)
    }

    @Test func destroyThenInitializeRepeatedlyLeavesOneWorkingEngine() throws {
        let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
        let entry = try ContentfulEntry(jsonData: fixtureData(Self.hero))
        for _ in 0..<20 {
            try client.initialize(config: OptimizationConfig(clientId: "c"))
            #expect(client.resolveOptimizedEntry(baseline: entry).entryId == entry.id)
            client.destroy()
        }
    }
}

@Suite("Input validation")
struct InputValidationTests {
    @Test(arguments: [
        ("invalid/not-json.txt", "invalid JSON"), ("invalid/truncated.json", "invalid JSON"),
        ("invalid/wrong-shape-array.json", "expected a JSON object"), ("invalid/wrong-shape-string.json", "expected a JSON object"),
        ("invalid/empty-collection.json", "no items"), ("invalid/entry-missing-sys.json", "sys"),
    ])
    func badEntryDocumentsAreClearErrors(_ file: String, _ fragment: String) throws {
        #expect {
            _ = try ContentfulEntry(jsonData: fixtureData(file))
        } throws: { error in
            "\(error)".contains(fragment)
        }
    }

    @Test func absurdlyDeepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
        #expect(throws: ContentfulEntryError.self) { try ContentfulEntry(jsonText: deep) }
        var value: JSONValue = 1
        for _ in 0..<600 { value = .array([value]) }
        #expect(throws: JSONError.self) { try value.jsonText() }
    }

    @Test func selectionsMustBeAnEnvelopeOrAnArray() throws {
        #expect(throws: SelectedOptimizationsError.self) {
            try SelectedOptimizations(jsonData: fixtureData("invalid/selections-wrong-shape.json"))
        }
        #expect(try SelectedOptimizations(jsonData: Array("[]".utf8)) == .empty)
    }

    @Test func entryIdMustNameAnItem() throws {
        #expect(throws: ContentfulEntryError.entryNotFound("nope")) {
            try ContentfulEntry(jsonData: fixtureData("entries/hero-optimized.json"), entryId: "nope")
        }
    }
}

@Suite("Resolution memory")
struct ResolutionMemoryTests {
    @Test func resolvingLeaksNoProtectedValuesAndTheHeapStaysBounded() throws {
        let client = try makeClient(OptimizationConfig(clientId: "c", entryCacheSize: 16))
        let runtime = try #require(client.currentRuntime)
        let selections = try SelectedOptimizations(jsonData: fixtureData("selections/new-visitor.json"))
        let hero = try ContentfulEntry(jsonData: fixtureData("entries/hero-optimized.json"))
        _ = client.resolveOptimizedEntry(baseline: hero, selectedOptimizations: selections)
        runtime.engine.collectGarbage()
        let start = try runtime.engine.memoryStatistics()
        for round in 0..<3_000 {
            // Warm calls, plus a steady stream of new documents that evict each other.
            _ = client.resolveOptimizedEntry(baseline: hero, selectedOptimizations: selections)
            if round % 10 == 0 {
                let fresh = try ContentfulEntry(jsonData: fixtureData("entries/cda-hero-collection.json"))
                _ = client.resolveOptimizedEntry(baseline: fresh, selectedOptimizations: selections)
            }
        }
        runtime.engine.collectGarbage()
        let end = try runtime.engine.memoryStatistics()
        #expect(end.protectedObjectCount == start.protectedObjectCount)
        // 1,000 contexts (the registry cap) and 16 cached documents at most: bounded, not growing.
        #expect(end.heapSize < start.heapSize + 8 * 1024 * 1024)
    }
}

@Suite("JSON convenience")
struct JSONConvenienceTests {
    @Test func explicitSelectionsThatCannotBeSerializedSelectNothingRatherThanTheCurrentOnes() throws {
        let client = try makeClient(OptimizationConfig(
            clientId: "c", defaults: StorageDefaults(selectedOptimizations: try JSONValue(jsonData: fixtureData("selections/new-visitor.json"))["data"]?["experiences"])))
        let hero = try JSONValue(jsonData: fixtureData("entries/hero-optimized.json"))
        let current = client.resolveOptimizedEntry(baseline: hero)
        #expect(current.selectedOptimization != nil, "nil uses the configured current selections")
        var deep: JSONValue = 1
        for _ in 0..<600 { deep = .array([deep]) }
        let explicit = client.resolveOptimizedEntry(baseline: hero, selectedOptimizations: [deep])
        #expect(explicit.selectedOptimization == nil && explicit.entryId == hero["sys"]?["id"]?.stringValue)
    }
}
