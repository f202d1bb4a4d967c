import OptimizationTesting
import PersonalizedPagesApp
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
}
