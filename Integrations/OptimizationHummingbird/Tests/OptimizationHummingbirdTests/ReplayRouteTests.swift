import HummingbirdTesting
import Optimization
import OptimizationHummingbird
import OptimizationTesting
import Testing

/// The replay route: a handoff page's sealed ticket commits once, for the visitor it was issued
/// to; nothing else reaches the Experience API.
@Suite struct ReplayRouteTests {
    /// The `{"ticket":…}` body of a ticket.
    static func body(_ ticket: String) -> String { #"{"ticket":"\#(ticket)"}"# }

    @Test func aTicketCommitsOnceAndOnlyForTheVisitorItWasIssuedTo() async throws {
        try await withLocalAPIServer { server in
            try await withTestApp(server) { client, app in
                let first = try await client.send(.get, "/first", cookie: app.cookie(VisitorState(consent: true)))
                #expect(first.status == .ok)
                let ticket = first.text
                let owner = "\(app.cookies.name)=\(try #require(app.setCookieValue(first)))"
                let profileId = try #require(app.setState(first)?.profileId, "the preflight's profile is stored")
                #expect(server.requests(matching: .experience).count == 1, "the preflight")

                let others: [String?] = [
                    app.cookie(VisitorState(profileId: "someone-else", consent: true)),
                    nil,
                    "\(app.cookies.name)=\(TestState.foreignCodec.seal(VisitorState(profileId: profileId, consent: true)))",
                ]
                for cookie in others {
                    #expect(try await client.send(.post, "/replay", cookie: cookie, json: Self.body(ticket)).status == .forbidden)
                }
                #expect(server.requests(matching: .experience).count == 1, "no other visitor's commit reached the API")

                // The owner's browser made to post by another site (or a post naming no site).
                for headers in [[("Origin", "https://attacker.example")], [("Sec-Fetch-Site", "cross-site")], []] as [[(String, String)]] {
                    let crossSite = try await client.send(.post, "/replay", cookie: owner, headers: headers, body: Self.body(ticket), asBrowser: false)
                    #expect(crossSite.status == .forbidden, "\(headers)")
                }
                #expect(server.requests(matching: .experience).count == 1, "no cross-site commit reached the API")

                #expect(try await client.send(.post, "/replay", cookie: owner, json: Self.body(ticket)).status == .noContent)
                #expect(try await client.send(.post, "/replay", cookie: owner, json: Self.body(ticket)).status == .conflict, "committed already")
                let calls = server.requests(matching: .experience)
                #expect(calls.count == 2, "one commit")
                #expect(calls.last?.path.hasSuffix("/profiles/\(profileId)") == true)
                #expect(calls.last?.queryValue("type") != "preflight")
            }
        }
    }

    @Test func aForgedTamperedOrExpiredTicketIsRefusedWithoutAnExperienceCall() async throws {
        try await withLocalAPIServer { server in
            try await withTestApp(server) { client, app in
                let visitor = app.cookie(VisitorState(consent: true))
                let first = try await client.send(.get, "/first", cookie: visitor)
                let ticket = first.text
                let owner = "\(app.cookies.name)=\(try #require(app.setCookieValue(first)))"
                let forged = [
                    "v1.forged.mac",
                    ticket + "x",
                    VisitorStateForgery.withPayload(ticket, #"{"exp":99999999999999,"v":{"id":"x","profile":null,"replay":{"routeKey":"/first","events":[{"type":"page"}]}}}"#),
                    app.cookies.codec.seal(VisitorState(consent: true)),  // signed with the key, but visitor state, not a ticket
                ]
                for text in forged {
                    #expect(try await client.send(.post, "/replay", cookie: owner, json: Self.body(text)).status == .forbidden, "\(text.prefix(30))")
                }
                #expect(try await client.send(.post, "/replay", cookie: owner, json: #"{"replay":{}}"#).status == .unprocessableContent)
                app.clock.advance(by: .seconds(600))
                #expect(try await client.send(.post, "/replay", cookie: owner, json: Self.body(ticket)).status == .forbidden, "expired")
                #expect(server.requests(matching: .experience).count == 1, "only the preflight")
            }
        }
    }

    @Test func aReplayTheVisitorsConsentNoLongerAllowsIsRefused() async throws {
        try await withLocalAPIServer { server in
            // No allow-listed events: without consent nothing may be sent.
            try await withTestApp(server, allowedEventTypes: []) { client, app in
                let first = try await client.send(.get, "/first", cookie: app.cookie(VisitorState(consent: true)))
                let profileId = try #require(app.setState(first)?.profileId)
                let withdrawn = app.cookie(VisitorState(profileId: profileId, consent: false))
                #expect(try await client.send(.post, "/replay", cookie: withdrawn, json: Self.body(first.text)).status == .forbidden)
                #expect(server.requests(matching: .experience).count == 1, "only the preflight")
            }
        }
    }
}
