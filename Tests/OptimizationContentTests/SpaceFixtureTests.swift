import Foundation
import Optimization
import OptimizationTestSupport
import Testing

/// Every entry of the test space (`Fixtures/space`), resolved for its new visitor: the optimized
/// baselines the visitor is selected into render their variant, everything else renders itself.
@Suite("The test space, resolved for a new visitor")
struct SpaceFixtureTests {
    static let entryFiles: [String] = (try? FileManager.default.contentsOfDirectory(
        atPath: spaceFixturesDirectory.appendingPathComponent("entries").path))?.sorted() ?? []

    /// Baseline → rendered entry for the new visitor (`Fixtures/README.md`).
    static let expected = [
        "hero-home": "hero-home-europe", "promo-strip": "promo-strip-b",
        "holiday-banner": "holiday-banner-c", "shipping-note": "shipping-note-eu",
    ]

    @Test(arguments: entryFiles)
    func newVisitorResolvesAsDocumented(_ file: String) throws {
        let client = try makeClient()
        defer { client.destroy() }
        let data = try Data(contentsOf: spaceFixturesDirectory.appendingPathComponent("entries/\(file)"))
        let entry = try ContentfulEntry(jsonData: data)
        let selections = try SelectedOptimizations(
            jsonData: Data(contentsOf: spaceFixturesDirectory.appendingPathComponent("experience/new-visitor.json")))
        let resolved = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
        if let variant = Self.expected[entry.id] {
            #expect(resolved.entryId == variant)
            #expect(resolved.selectedOptimization != nil)
        } else {
            #expect(resolved.entryId == entry.id)
        }
        #expect(!resolved.isEmptyVariant)
    }

    @Test func theSpaceHoldsEveryKindOfEntry() throws {
        #expect(Self.entryFiles.count == 37)
        var contentTypes: [String: Int] = [:]
        for file in Self.entryFiles {
            let entry = try ContentfulEntry(jsonData: Data(contentsOf: spaceFixturesDirectory.appendingPathComponent("entries/\(file)")))
            let type = entry.document["items"]?[0]?["sys"]?["contentType"]?["sys"]?["id"]?.stringValue ?? "?"
            contentTypes[type, default: 0] += 1
        }
        #expect(contentTypes == ["nt_audience": 7, "nt_experience": 7, "content": 17, "nestedContent": 4, "nt_mergetag": 1, "mergeTagContent": 1] as [String: Int])
    }

    @Test func aBaselineSelectedAtIndexZeroRendersItself() throws {
        let client = try makeClient()
        defer { client.destroy() }
        let entry = try ContentfulEntry(jsonData: Data(contentsOf: spaceFixturesDirectory.appendingPathComponent("entries/gear-grid.json")))
        let selections = try SelectedOptimizations(
            jsonData: Data(contentsOf: spaceFixturesDirectory.appendingPathComponent("experience/new-visitor.json")))
        let resolved = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
        #expect(resolved.entryId == "gear-grid")
        #expect(resolved.selectedOptimization?["experienceId"] == "exp-gear-layout")
    }
}
