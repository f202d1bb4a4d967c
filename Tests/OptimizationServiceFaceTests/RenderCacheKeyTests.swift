import Foundation
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import Testing

/// A cache key for rendered output depends only on the variants actually rendered and the locale.
/// On the test space it is compared with a fingerprint of the whole selection list (every
/// experience, its variant index and stickiness, the locale and the page's entry ids), the key a
/// server would use if it did not know which variants a page rendered.
@Suite("Render cache keys")
struct RenderCacheKeyTests {
    /// The reference's permutation key: the whole selection list (sorted: experience id, variant
    /// index, sticky, sorted baseline→variant map), the locale and the rendered entry ids.
    static func referenceFingerprint(_ selections: [JSONValue], locale: String, entryIds: [String]) -> String {
        let parts = selections.map { selection -> String in
            let variants = (selection["variants"]?.objectValue ?? [:]).map { "\($0.key)>\($0.value.stringValue ?? "")" }.sorted()
            return "\(selection["experienceId"]?.stringValue ?? "")|\(selection["variantIndex"]?.intValue ?? -1)|\(selection["sticky"]?.boolValue ?? false)|\(variants.joined(separator: ","))"
        }.sorted()
        return "ctfl-opt-selection:v1:" + parts.joined(separator: ";") + "#" + locale + "#" + entryIds.sorted().joined(separator: ",")
    }

    @Test func theKeyDependsOnRenderedVariantsAndLocaleOnly() {
        var first = RenderedVariants()
        first.record(baseline: "hero", resolved: ResolvedOptimizedEntry(entry: ["sys": ["id": "hero-b"]]))
        first.record(baseline: "promo", resolved: ResolvedOptimizedEntry(entry: ["sys": ["id": "promo"]]))
        var second = RenderedVariants()
        second.record(baseline: "promo", resolved: ResolvedOptimizedEntry(entry: ["sys": ["id": "promo"]], selectedOptimization: ["experienceId": "x"]))
        second.record(baseline: "hero", resolved: ResolvedOptimizedEntry(entry: ["sys": ["id": "hero-b"]], optimizationContextId: "ctx"))
        #expect(first.cacheKey(locale: "en-US") == second.cacheKey(locale: "en-US"), "order, selections and contexts do not matter")
        #expect(first.cacheKey(locale: "en-US") != first.cacheKey(locale: "de-DE"))
        var empty = RenderedVariants()
        empty.record(baseline: "hero", resolved: ResolvedOptimizedEntry(entry: ["sys": ["id": "hero-b"]], isEmptyVariant: true))
        empty.record(baseline: "promo", resolved: ResolvedOptimizedEntry(entry: ["sys": ["id": "promo"]]))
        #expect(empty.cacheKey(locale: "en-US") != first.cacheKey(locale: "en-US"), "an empty variant is its own permutation")
        #expect(first.cacheKey(locale: "en-US").hasPrefix("ctfl-render:v1:") && first.cacheKey(locale: "en-US").count == 31)
    }

    @Test
    func fewerDistinctKeysThanTheSelectionFingerprintOnTheTestSpace() async throws {
        let service = OptimizationService(
            config: OptimizationConfig(clientId: "org-1"), options: .init(engines: 1),
            environment: .init(transport: RecordingFetchTransport()))
        try await service.start()
        let directory = spaceFixturesDirectory.appendingPathComponent("entries")
        let page = try ["hero-home", "promo-strip", "holiday-banner"].map {
            try ContentfulEntry(jsonData: Data(contentsOf: directory.appendingPathComponent("\($0).json")))
        }
        let experiences = try #require(try JSONValue(jsonData: Data(contentsOf: spaceFixturesDirectory.appendingPathComponent("experience/new-visitor.json")))["data"]?["experiences"]?.arrayValue)
        var random = ConsentModelRandom(seed: 42)
        var ours = Set<String>()
        var reference = Set<String>()
        var renderedPermutations = Set<[String: String]>()
        for visitor in 0..<300 {
            // Every visitor is selected into every experience of the space, each at a random
            // variant (0 = baseline, 1 = variant), as the Experience API answers.
            let selections = experiences.map { $0.replacing("variantIndex", .number(JSONNumber(Int.random(in: 0...1, using: &random)))) }
            let locale = visitor.isMultiple(of: 2) ? "en-US" : "de-DE"
            let request = service.forRequest(RequestOptions(locale: locale, selectedOptimizations: try SelectedOptimizations(selections)))
            let rendered = page.map { request.resolveOptimizedEntry(baseline: $0).entryId ?? "?" }
            ours.insert(request.renderCacheKey)
            reference.insert(Self.referenceFingerprint(selections, locale: locale, entryIds: page.map(\.id)))
            renderedPermutations.insert(request.renderedVariants.merging(["locale": locale]) { a, _ in a })
            #expect(rendered.count == 3)
        }
        await service.shutdown()
        print("render cache keys over 300 visitors: ours \(ours.count), reference fingerprint \(reference.count), rendered permutations \(renderedPermutations.count)")
        #expect(ours.count == renderedPermutations.count, "one key per rendered permutation, no more")
        #expect(ours.count < reference.count)
        #expect(ours.count <= 2 * 8, "three entries with two variants each, two locales")
    }
}

private extension JSONValue {
    func replacing(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var members) = self else { return self }
        members[key] = value
        return .object(members)
    }
}
