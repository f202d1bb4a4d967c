import OptimizationTesting
@testable import PersonalizedPagesApp
import Testing

@Suite struct VisitorCookiesTests {
    @Test func theCookieHeaderIsReadOnceForTheThreeNames() throws {
        let selections = try SelectedOptimizations([["experienceId": "e1", "variantIndex": 1, "variants": [:]]])
        let handoff = try #require(SelectionHandoff.encode(selections))
        let cookies = VisitorCookies(cookieHeader: "other=1;pp_consent=yes;  pp_profile=abc-123; pp_selections=\(handoff); broken; pp_consent=no")
        #expect(cookies.consent == true, "the first of a repeated name wins")
        #expect(cookies.profileId == "abc-123")
        #expect(cookies.handoff == selections)
        #expect(cookies.handoffCookie == handoff)

        let declined = VisitorCookies(cookieHeader: "pp_consent=no; pp_profile=bad id!")
        #expect(declined.consent == false)
        #expect(declined.profileId == nil, "a value that is not a profile id is ignored")
        #expect(declined.handoff == nil && declined.handoffCookie == nil)

        let empty = VisitorCookies(cookieHeader: "")
        #expect(empty == VisitorCookies())
        #expect(VisitorCookies(cookieHeader: "pp_consent=maybe; pp_profile=; =x; pp_selections=v1.%%%").consent == nil)
        #expect(VisitorCookies(cookieHeader: "pp_selections=v1.%%%").handoff == nil)
    }

    @Test func viewIdsAreVersion4UUIDs() {
        var seen = Set<String>()
        for _ in 0..<1_000 {
            let id = PageRoutes.randomViewId()
            let parts = id.split(separator: "-").map(\.count)
            #expect(parts == [8, 4, 4, 4, 12], "\(id)")
            let characters = Array(id)
            #expect(characters[14] == "4" && "89ab".contains(characters[19]), "\(id)")
            #expect(id.allSatisfy { $0 == "-" || $0.isHexDigit && !$0.isUppercase }, "\(id)")
            seen.insert(id)
        }
        #expect(seen.count == 1_000)
    }
}
