import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationContent
import Testing

/// Replays every input kept under `Tests/Fuzz/Regressions/<harness>/` (crashes and hard cases
/// found by `scripts/fuzz`) through the properties its libFuzzer harness checks, using the public
/// API: a kept input that crashes again fails here without a fuzzer.
@Suite("Fuzz regression inputs")
struct FuzzRegressionTests {
    static let directory = repositoryRoot.appendingPathComponent("Tests/Fuzz/Regressions")

    static func inputs(_ harness: String) -> [String] {
        let folder = directory.appendingPathComponent(harness)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { "\(harness)/\($0)" }
    }

    static func bytes(_ input: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(input)))
    }

    @Test func everyHarnessKeepsAtLeastOneInput() {
        for harness in ["json-parser", "selected-optimizations", "entry-resolve", "experience-response"] {
            #expect(!Self.inputs(harness).isEmpty, "\(harness)")
        }
    }

    @Test(arguments: inputs("json-parser"))
    func jsonParserRoundTrips(input: String) throws {
        guard let value = try? JSONValue(jsonData: Self.bytes(input)) else { return }
        let text = try value.jsonText()
        #expect(try JSONValue(jsonText: text) == value)
        #expect(try JSONValue(jsonText: text).jsonText() == text)
    }

    @Test(arguments: inputs("selected-optimizations"))
    func selectedOptimizationsReRead(input: String) throws {
        guard let selections = try? SelectedOptimizations(jsonData: Self.bytes(input)) else { return }
        let again = try SelectedOptimizations(jsonData: Array(selections.jsonText.utf8))
        #expect(again == selections && again.cacheKey == selections.cacheKey)
    }

    @Test(arguments: inputs("entry-resolve"))
    func entryResolvesWithoutFallingBack(input: String) throws {
        guard let entry = try? ContentfulEntry(jsonData: Self.bytes(input)) else { return }
        let client = try makeClient()
        defer { client.destroy() }
        for variantIndex in 0..<4 {
            let selections = Self.selections(naming: entry, variantIndex: variantIndex)
            let runtime = try #require(client.currentRuntime)
            let resolved = runtime.resolve(entry, selections: selections)
            #expect(resolved.entry["sys"] != nil || resolved.entry == entry.renderedBaseline)
        }
    }

    @Test(arguments: inputs("experience-response"))
    func experienceResponseSelectionsResolve(input: String) throws {
        let bytes = try Self.bytes(input)
        let client = try makeClient()
        defer { client.destroy() }
        let hero = try ContentfulEntry(jsonData: fixtureData("entries/hero-optimized.json"))
        if let selections = try? SelectedOptimizations(jsonData: bytes) {
            let resolved = client.resolveOptimizedEntry(baseline: hero, selectedOptimizations: selections)
            #expect(resolved.entryId != nil)
        }
    }

    /// The entry-resolve harness's selections: one per experience id of the baseline.
    static func selections(naming entry: ContentfulEntry, variantIndex: Int) -> SelectedOptimizations {
        var elements: [JSONValue] = []
        for experience in entry.baseline["fields"]?["nt_experiences"]?.arrayValue ?? [] {
            var target = experience
            if let id = LinkResolver.entryLinkID(experience), let linked = entry.entriesById[id] { target = linked }
            if let id = target["fields"]?["nt_experience_id"]?.stringValue {
                elements.append(["experienceId": .string(id), "variantIndex": .number(JSONNumber(variantIndex)), "variants": [:]])
            }
        }
        return (try? SelectedOptimizations(elements)) ?? .empty
    }
}
