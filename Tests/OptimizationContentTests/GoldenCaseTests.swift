import Foundation
import Optimization
import OptimizationTestSupport
@testable import OptimizationContent
import Testing

@Suite("Golden resolution cases (Fixtures/golden-cases.json)")
struct GoldenCaseTests {
    @Test func goldenCasesArePresent() {
        #expect(GoldenCase.all.count >= 40)
    }

    @Test(arguments: GoldenCase.all)
    func resolvesThroughTheSwiftAPI(_ golden: GoldenCase) throws {
        let client = try makeClient()
        defer { client.destroy() }
        let entry = try ContentfulEntry(jsonData: fixtureData(golden.entry), entryId: golden.entryId)
        let selections = try golden.selections.map { try SelectedOptimizations(jsonData: fixtureData($0)) }
        // Twice: the first call transfers the entry into the engine, the second uses its cache.
        for _ in 0..<2 {
            let resolved = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
            #expect(resolved.entryId == golden.expectedEntryId)
            #expect(resolved.isEmptyVariant == golden.expectedEmpty)
            #expect(resolved.selectedOptimization?["experienceId"] == golden.expectedSelection?["experienceId"])
            #expect(resolved.selectedOptimization?["variantIndex"] == golden.expectedSelection?["variantIndex"])
            #expect((resolved.optimizationContextId != nil) == (golden.expectedSelection != nil))
        }
    }

    @Test(arguments: GoldenCase.all.filter { $0.entry.contains("collection") || $0.entryId != nil })
    func collectionOutputHasIncludedLinksResolved(_ golden: GoldenCase) throws {
        let client = try makeClient()
        defer { client.destroy() }
        let entry = try ContentfulEntry(jsonData: fixtureData(golden.entry), entryId: golden.entryId)
        let selections = try golden.selections.map { try SelectedOptimizations(jsonData: fixtureData($0)) }
        let resolved = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
        // Any entry link left in the output must be a cycle back-edge or a target that is not included.
        for id in entryLinkIDs(in: resolved.entry) where entry.entriesById[id] != nil {
            #expect(isOnCycle(id, from: resolved.entryId ?? "", in: entry), "link to \(id) left unresolved")
        }
    }

    private func entryLinkIDs(in value: JSONValue) -> [String] {
        if let id = LinkResolver.entryLinkID(value) { return [id] }
        switch value {
        case .array(let elements): return elements.flatMap(entryLinkIDs)
        case .object(let members): return members.values.flatMap(entryLinkIDs)
        default: return []
        }
    }

    /// True when `id` can reach `root` or itself through entry links (so expanding it loops).
    private func isOnCycle(_ id: String, from root: String, in entry: ContentfulEntry) -> Bool {
        var seen: Set<String> = []
        var stack = [id]
        while let next = stack.popLast() {
            guard seen.insert(next).inserted, let target = entry.entriesById[next] else { continue }
            let links = entryLinkIDs(in: target)
            if links.contains(id) || links.contains(root) { return true }
            stack += links
        }
        return false
    }
}
