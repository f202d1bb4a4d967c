import Optimization
import OptimizationTesting
import OptimizationVapor
import Testing
import VaporTesting

/// `addReplayRoute`: a handoff page's sealed ticket commits once, for the visitor it was issued to.
@Suite struct ReplayTests {
    static func ticketBody(_ ticket: String) -> String { #"{"ticket":"\#(ticket)"}"# }

    @Test func theReplayIsCommittedOnceForItsOwnVisitor() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server) { harness in
                let handoff = try await harness.send(.GET, "/first", cookie: harness.cookie(VisitorState(consent: true)))
                let owner = try #require(harness.returnedCookie(handoff))
                let profileId = try #require(harness.storedState(handoff)?.profileId)
                let body = Self.ticketBody(handoff.text)
                let strangers = [harness.cookie(VisitorState(profileId: "vapor-stranger", consent: true)), nil]
                for cookie in strangers {
                    #expect(try await harness.send(.POST, "/replay", cookie: cookie, json: body).status == .forbidden)
                }
                for headers in [[("Origin", "https://evil.example")], [("Sec-Fetch-Site", "cross-site")], []] as [[(String, String)]] {
                    let crossSite = try await harness.send(.POST, "/replay", cookie: owner, headers: headers, raw: body, asBrowser: false)
                    #expect(crossSite.status == .forbidden, "cross-site: \(headers)")
                }
                #expect(try await harness.send(.POST, "/replay", cookie: owner, json: body).status == .noContent)
                #expect(try await harness.send(.POST, "/replay", cookie: owner, json: body).status == .conflict, "once only")
                let calls = server.requests(matching: .experience)
                #expect(calls.count == 2, "the preflight and one commit")
                #expect(calls.last?.path.hasSuffix("/profiles/\(profileId)") == true && calls.last?.queryValue("type") != "preflight")
            }
        }
    }

    @Test func aForgedOrExpiredTicketOrABadBodyCommitsNothing() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server) { harness in
                let handoff = try await harness.send(.GET, "/first", cookie: harness.cookie(VisitorState(consent: true)))
                let owner = try #require(harness.returnedCookie(handoff))
                for forged in [handoff.text + "0", "v1.a.b", harness.cookies.codec.seal(VisitorState(consent: true))] {
                    #expect(try await harness.send(.POST, "/replay", cookie: owner, json: Self.ticketBody(forged)).status == .forbidden)
                }
                #expect(try await harness.send(.POST, "/replay", cookie: owner, json: "[1]").status == .unprocessableEntity)
                harness.clock.advance(by: .seconds(600))
                #expect(try await harness.send(.POST, "/replay", cookie: owner, json: Self.ticketBody(handoff.text)).status == .forbidden, "expired")
                #expect(server.requests(matching: .experience).count == 1, "only the preflight")
            }
        }
    }
}
