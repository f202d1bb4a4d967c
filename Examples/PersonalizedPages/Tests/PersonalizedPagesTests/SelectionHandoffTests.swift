import OptimizationTesting
@testable import PersonalizedPagesApp
import Testing

@Suite struct SelectionHandoffTests {
    @Test func roundTripsAndRejectsAnythingElse() throws {
        let selections = try SelectedOptimizations([
            ["experienceId": "expStripResolved", "variantIndex": 1, "variants": ["promoStripBaseline": "promoStripVariant"], "sticky": false],
        ])
        let value = try #require(SelectionHandoff.encode(selections))
        #expect(value.hasPrefix("v1."))
        #expect(value.utf8.allSatisfy { $0 == 0x2E || $0 == 0x2D || $0 == 0x5F || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) })
        #expect(SelectionHandoff.decode(value) == selections)
        for bad in ["", "v1.", "v2." + value.dropFirst(3), "v1.%%%", "v1.e30", "v1.W10", String(value.dropLast())] {
            let decoded = SelectionHandoff.decode(bad)
            // "v1.W10" is `[]`: valid and empty; everything else is rejected.
            if bad == "v1.W10" { #expect(decoded == .empty) } else { #expect(decoded == nil, "\(bad)") }
        }
        let huge = try SelectedOptimizations((0..<200).map { ["experienceId": .string("experience-\($0)"), "variantIndex": 1, "variants": [:]] })
        #expect(SelectionHandoff.encode(huge) == nil, "too long for a cookie: not written")
    }

    @Test func aCookieValueIsDecodedOnceAndTheCacheIsBounded() throws {
        let selections = try SelectedOptimizations([
            ["experienceId": .string("cache-\(UInt64.random(in: 0...UInt64.max))"), "variantIndex": 1, "variants": [:]],
        ])
        let value = try #require(SelectionHandoff.encode(selections))
        #expect(SelectionHandoff.decodedCache.value(for: value) == nil)
        #expect(SelectionHandoff.decode(value) == selections)
        #expect(SelectionHandoff.decodedCache.value(for: value) == selections, "kept for the next request")
        #expect(SelectionHandoff.decodedCache.value(for: "v1.%%%") == nil)
        #expect(SelectionHandoff.decode("v1.%%%") == nil)
        #expect(SelectionHandoff.decodedCache.value(for: "v1.%%%") == nil, "rejected values are not kept")

        let cache = BoundedCache<String, Int>(capacity: 2)
        cache.insert(1, for: "a")
        cache.insert(2, for: "b")
        cache.insert(20, for: "b")
        #expect(cache.count == 2 && cache.value(for: "b") == 20)
        cache.insert(3, for: "c")
        #expect(cache.count == 2)
        #expect(cache.value(for: "a") == nil, "the oldest goes first")
        #expect(cache.value(for: "c") == 3)
    }
}
