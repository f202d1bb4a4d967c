import Foundation
import JavaScriptHost
import Optimization
import OptimizationHummingbird
import OptimizationTesting
@testable import PersonalizedPagesApp
import Testing

@Suite(.hangBound) struct VisitorCookiesTests {
    static let cookies = VisitorCookies(codec: TestVisitorState.codec, secure: true, name: PersonalizedPagesApp.stateCookieName)

    @Test func theStateCookieOpensOnlyWhenSealedWithTheKey() throws {
        let selections = try SelectedOptimizations([["experienceId": "e1", "variantIndex": 1, "variants": [:]]])
        let state = VisitorState(profileId: "abc-123", consent: true, selections: selections)
        let sealed = TestVisitorState.codec.seal(state)
        let rejectedBefore = Self.cookies.codec.rejectedCount
        #expect(Self.cookies.state(cookieHeader: "other=1;  pp_state=\(sealed); broken; pp_state=x") == state, "the first pp_state wins")
        #expect(Self.cookies.codec.rejectedCount == rejectedBefore)
        // Unsigned, tampered or foreign values are a new visitor, and counted.
        let foreign = VisitorStateCodec(keys: VisitorStateKeys.random(), lifetime: .seconds(60)).seal(state)
        for header in ["pp_state=x; pp_state=\(sealed)", "pp_state=\(foreign)", "pp_state=\(sealed.dropLast())", "pp_state=", "pp_consent=yes; pp_profile=abc-123"] {
            #expect(Self.cookies.state(cookieHeader: header) == VisitorState(), "\(header)")
        }
        #expect(Self.cookies.codec.rejectedCount == rejectedBefore + 4, "every presented bad value counted (none for no pp_state)")
        #expect(Self.cookies.state(cookieHeader: "") == VisitorState())
    }

    @Test func theCookieIsSecureHttpOnlyLaxAndLeavesOutSelectionsThatDoNotFit() throws {
        let small = VisitorState(profileId: "p", consent: true, selections: try SelectedOptimizations([["experienceId": "e1", "variantIndex": 1, "variants": [:]]]))
        let cookie = Self.cookies.cookie(for: small)
        #expect(cookie.name == "pp_state" && cookie.secure && cookie.httpOnly && cookie.sameSite == .lax && cookie.path == "/")
        #expect(cookie.maxAge == VisitorCookies.maxAge)
        #expect(TestVisitorState.codec.open(cookie.value) == small)
        #expect(!VisitorCookies(codec: TestVisitorState.codec, secure: false).cookie(for: small).secure)
        let huge = try SelectedOptimizations((0..<200).map { ["experienceId": .string("experience-\($0)"), "variantIndex": 1, "variants": [:]] })
        let trimmed = Self.cookies.cookie(for: VisitorState(profileId: "p", consent: true, selections: huge))
        #expect(trimmed.value.utf8.count <= VisitorCookies.maximumCookieLength)
        #expect(TestVisitorState.codec.open(trimmed.value) == VisitorState(profileId: "p", consent: true), "too long for a cookie: selections left out")
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
