import Foundation
import Optimization
import Testing

/// The real-world payloads in ../shared/fixtures (not part of a user's clone: skipped when absent).
@Suite("Real-world Contentful payloads (../shared/fixtures)")
struct SharedFixtureTests {
    static let available = FileManager.default.fileExists(atPath: sharedFixturesDirectory.path)
    static let entryFiles: [String] = (try? FileManager.default.contentsOfDirectory(
        atPath: sharedFixturesDirectory.appendingPathComponent("entries").path))?.sorted() ?? []

    /// From ../shared/fixtures/README.md: baseline → rendered entry for the new visitor.
    static let expected = [
        "4ib0hsHWoSOnCVdDkizE8d": "4k6ZyFQnR2POY5IJLLlJRb", "2Z2WLOx07InSewC3LUB3eX": "1UFf7qr4mHET3HYuYmcpEj",
        "xFwgG3oNaOcjzWiGe4vXo": "6iyPl6vfDH5AoClf3MtYlh", "5XHssysWUDECHzKLzoIsg1": "4bmHsNUaEibELHwWCon3dt",
    ]

    @Test(.enabled(if: available, "../shared/fixtures is not present in this checkout"), arguments: entryFiles)
    func newVisitorResolvesAsDocumented(_ file: String) throws {
        let client = try makeClient()
        defer { client.destroy() }
        let data = try Data(contentsOf: sharedFixturesDirectory.appendingPathComponent("entries/\(file)"))
        let entry = try ContentfulEntry(jsonData: data)
        let selections = try SelectedOptimizations(
            jsonData: Data(contentsOf: sharedFixturesDirectory.appendingPathComponent("experience/new-visitor.json")))
        let resolved = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
        if let variant = Self.expected[entry.id] {
            #expect(resolved.entryId == variant)
            #expect(resolved.selectedOptimization != nil)
        } else {
            #expect(resolved.entryId == entry.id)
            #expect(resolved.selectedOptimization == nil)
        }
        #expect(!resolved.isEmptyVariant)
    }

    @Test(.enabled(if: available, "../shared/fixtures is not present in this checkout"))
    func allNineOptimizedBaselinesArePresent() {
        #expect(Self.entryFiles.count >= 40)
    }
}
