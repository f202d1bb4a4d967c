import Foundation
import JavaScriptHost
import Optimization
import OptimizationHummingbird
import OptimizationTesting
import PersonalizedPagesApp
import Testing

/// What a visitor (or another site) sends is never trusted: forged, tampered, expired or foreign
/// visitor state is a new visitor; a replay is committed only from a ticket the app issued, for
/// that visitor, once; consent changes only from this site. Real HTTP against the app in process.
@Suite(.hangBound) struct TrustedVisitorStateTests {
    /// A sealed text whose payload is replaced by `json` (base64url), keeping the original MAC.
    static func withPayload(_ sealed: String, _ json: String) -> String {
        let parts = sealed.split(separator: ".")
        let payload = Data(json.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "\(parts[0]).\(payload).\(parts[2])"
    }

    /// A codec with a key the app does not hold (an attacker's).
    static let foreignCodec = VisitorStateCodec(keys: VisitorStateKeys.random(), lifetime: .seconds(3600))

    /// The `{"ticket":…}` body of a `/first` page.
    static func ticketBody(_ page: PageResponse) throws -> String {
        String(try #require(page.body.firstMatch(of: /<script type="application\/json" id="optimization-replay">(.*)<\/script>/), "the page carries a replay ticket").1)
    }

    @Test func aForgedReplayIsRefusedWithoutAnExperienceCall() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(consent: true)])
                    let page = try await visitor.get("/first")
                    let body = try Self.ticketBody(page)
                    let ticket = try #require(try JSONValue(jsonText: body)["ticket"]?.stringValue)
                    #expect(server.requests(matching: .experience).count == 1, "the preflight")
                    // 199 `track` events claiming consent, as a handoff body and as a forged ticket.
                    let track: JSONValue = ["type": "track", "event": "forged", "messageId": "m", "context": ["gdpr": ["isConsentGiven": true]]]
                    let events = JSONValue.array(Array(repeating: track, count: 199) + [["type": "page", "messageId": "p"]])
                    let forgedReplay = try JSONValue.object(["routeKey": "/first", "events": events]).jsonText()
                    let forgedHandoff = try JSONValue.object(["cache": ["scope": "private-request"], "replay": try JSONValue(jsonText: forgedReplay)]).jsonText()
                    #expect(try await visitor.post("/replay", json: forgedHandoff).status == 422)
                    let forgedTickets = [
                        "v1.forged.mac",
                        Self.withPayload(ticket, #"{"exp":99999999999999,"v":{"id":"x","profile":null,"replay":\#(forgedReplay)}}"#),
                        ticket + "x",
                        Self.foreignCodec.seal(VisitorState(consent: true)),
                        TestVisitorState.cookie(consent: true),  // signed by the app's key, but visitor state, not a ticket
                    ]
                    for forged in forgedTickets {
                        let status = try await visitor.post("/replay", json: #"{"ticket":"\#(forged)"}"#).status
                        #expect(status == 403, "\(forged.prefix(40))")
                    }
                    #expect(server.requests(matching: .experience).count == 1, "no forged replay reached the Experience API")
                    #expect(try await visitor.post("/replay", json: body).status == 204, "the issued ticket commits")
                    #expect(server.requests(matching: .experience).count == 2)
                }
            }
        }
    }

    @Test func aTicketCommitsOnceAndOnlyForTheVisitorItWasIssuedTo() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var owner = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: "visitor-a", consent: true)])
                    let body = try Self.ticketBody(try await owner.get("/first"))
                    let others: [[String: String]] = [
                        ["pp_state": TestVisitorState.cookie(profileId: "visitor-b", consent: true)],  // another visitor's own state
                        [:],  // no state
                        ["pp_profile": "visitor-a", "pp_consent": "yes"],  // unsigned cookies naming the owner
                        ["pp_state": Self.foreignCodec.seal(VisitorState(profileId: "visitor-a", consent: true))],  // signed by another key
                        ["pp_state": Self.withPayload(TestVisitorState.cookie(profileId: "visitor-b", consent: true), #"{"exp":99999999999999,"v":{"p":"visitor-a","c":true}}"#)],
                    ]
                    for cookies in others {
                        var other = Visitor(baseURL: baseURL, client: client, cookies: cookies)
                        let status = try await other.post("/replay", json: body).status
                        #expect(status == 403, "\(cookies.keys.sorted())")
                    }
                    #expect(server.requests(matching: .experience).count == 1, "only the preflight")
                    // The owner's browser made to post by another site (a text/plain form), or a post naming no site.
                    let host = String(baseURL.dropFirst("http://".count))
                    for headers in [[("Origin", "https://attacker.example"), ("Content-Type", "text/plain")], [("Sec-Fetch-Site", "cross-site")], [("Origin", "http://\(host).attacker.example")], []] {
                        #expect(try await owner.post("/replay", json: body, headers: headers, asBrowser: false).status == 403, "\(headers)")
                    }
                    #expect(server.requests(matching: .experience).count == 1, "no cross-site commit")
                    #expect(try await owner.post("/replay", json: body).status == 204)
                    #expect(try await owner.post("/replay", json: body).status == 409, "committed already")
                    #expect(try await owner.post("/replay", json: body).status == 409)
                    let calls = server.requests(matching: .experience)
                    #expect(calls.count == 2, "one commit reached the API")
                    #expect(calls.last?.path.hasSuffix("/profiles/visitor-a") == true)
                }
            }
        }
    }

    @Test func aTicketOfAVisitorWithoutAProfileCommitsOnlyForThatVisitorsBrowser() async throws {
        try await withLocalAPIServer { server in
            // A visitor that has not consented has no profile id in its state.
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var owner = Visitor(baseURL: baseURL, client: client)
                    let body = try Self.ticketBody(try await owner.get("/first"))
                    let ownerState = try #require(TestVisitorState.open(owner.cookies["pp_state"]), "the page stored the visitor's nonce")
                    #expect(ownerState.profileId == nil && ownerState.nonce != nil)
                    // Another visitor without a profile: its own first page gave it another nonce.
                    var other = Visitor(baseURL: baseURL, client: client)
                    _ = try await other.get("/first")
                    #expect(try await other.post("/replay", json: body).status == 403)
                    var stranger = Visitor(baseURL: baseURL, client: client)
                    #expect(try await stranger.post("/replay", json: body).status == 403, "no state at all")
                    #expect(server.requests(matching: .experience).allSatisfy { $0.queryValue("type") == "preflight" }, "nothing committed")
                }
            }
        }
    }

    @Test func oneClientIsIssuedAtMostThirtyTicketsAMinute() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var issued = 0
                    for _ in 0..<31 {
                        var visitor = Visitor(baseURL: baseURL, client: client)   // no cookies: a new visitor each time
                        let page = try await visitor.get("/first")
                        #expect(page.status == 200)
                        if page.body.contains(#"id="optimization-replay""#) { issued += 1 }
                    }
                    #expect(issued == 30, "the 31st page from this address carries no ticket")
                }
            }
        }
    }

    @Test func aDeclinedVisitorsOlderCookieCannotRestoreConsent() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client)
                    #expect(try await visitor.post("/consent", form: "consent=accept").status == 303)
                    _ = try await visitor.get("/")
                    let consentedCopy = try #require(visitor.cookies["pp_state"])
                    #expect(TestVisitorState.open(consentedCopy)?.consent == true)
                    #expect(try await visitor.post("/consent", form: "consent=decline").status == 303)
                    let sentBefore = server.requests(matching: .experience).count
                    // The copy taken before the decline, presented again.
                    var replaying = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": consentedCopy])
                    let page = try await replaying.get("/")
                    #expect(page.status == 200)
                    #expect(TestVisitorState.open(replaying.cookies["pp_state"])?.consent == false, "the decline is written back")
                    let calls = server.requests(matching: .experience).dropFirst(sentBefore)
                    let declinedProfile = try #require(TestVisitorState.open(consentedCopy)?.profileId)
                    #expect(!calls.isEmpty && !calls.contains { $0.path.contains(declinedProfile) }, "nothing for the declined profile")
                }
            }
        }
    }

    @Test func anExpiredTicketOrStateIsNotTrusted() async throws {
        let clock = ManualClock(start: Date().timeIntervalSince1970 * 1000)
        try await withLocalAPIServer { server in
            server.setExperienceData(perProfile: { PersonalizedPagesTests.experienceData(forProfile: $0) })
            try await withApp(server, clock: clock) { baseURL, app in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(consent: true)])
                    let body = try Self.ticketBody(try await visitor.get("/first"))
                    clock.advance(by: app.configuration.replayTicketLifetime)
                    #expect(try await visitor.post("/replay", json: body).status == 403)
                    #expect(server.requests(matching: .experience).count == 1, "only the preflight")

                    // State the app sealed opens for a year on its clock, then is a new visitor's.
                    var known = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: "visitor-b", consent: true)])
                    _ = try await known.get("/")
                    let sealedByApp = try #require(known.cookies["pp_state"])
                    #expect(try await known.get("/handoff").renderedEntries[PageIDs.promo] == PageIDs.promoVariant)
                    clock.advance(by: .seconds(VisitorCookies.maxAge))
                    known.cookies["pp_state"] = sealedByApp
                    let expired = try await known.get("/handoff")
                    #expect(expired.renderedEntries[PageIDs.promo] == PageIDs.promo)
                    #expect(expired.body.contains(#"data-consent="not asked""#))
                }
            }
        }
    }

    @Test func aTamperedSelectionsCookieRendersBaselinesAndSendsNoViewOfAVariantNeverAssigned() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, app in
                try await withHTTPClient { client in
                    // visitor-c was never assigned the promo strip's variant.
                    let genuine = TestVisitorState.cookie(profileId: "visitor-c", consent: true)
                    let variant = #"[{"experienceId":"expStripResolved","variantIndex":1,"variants":{"promoStripBaseline":"promoStripVariant"}}]"#
                    let tampered = [
                        Self.withPayload(genuine, #"{"exp":99999999999999,"v":{"p":"visitor-c","c":true,"s":\#(variant)}}"#),
                        Self.foreignCodec.seal(VisitorState(profileId: "visitor-c", consent: true, selections: try SelectedOptimizations(jsonData: Array(variant.utf8)))),
                        "v1." + Data(variant.utf8).base64EncodedString(),
                    ]
                    for value in tampered {
                        var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": value])
                        let handoff = try await visitor.get("/handoff")
                        #expect(handoff.renderedEntries[PageIDs.promo] == PageIDs.promo)
                        let events = try await visitor.get("/events")
                        #expect(events.renderedEntries[PageIDs.promo] == PageIDs.promo)
                    }
                    await app.service.flush()
                    let views = server.insightsEvents.filter { $0["type"] == "component" }
                    #expect(!views.contains { $0["experienceId"] == "expStripResolved" }, "no view of a variant never assigned")
                    #expect(views.isEmpty, "a new visitor has no profile id: no views")
                    // The same selections sealed with the app's key do render (the test would pass vacuously otherwise).
                    var sealed = Visitor(baseURL: baseURL, client: client, cookies: [
                        "pp_state": TestVisitorState.cookie(profileId: "visitor-c", consent: true, selections: try SelectedOptimizations(jsonData: Array(variant.utf8))),
                    ])
                    #expect(try await sealed.get("/handoff").renderedEntries[PageIDs.promo] == PageIDs.promoVariant)
                }
            }
        }
    }

    @Test func aCrossSiteConsentPostIsRefusedAndLeavesConsentUnchanged() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    let declined = TestVisitorState.cookie(consent: false)
                    let host = String(baseURL.dropFirst("http://".count))
                    let crossSite: [[(String, String)]] = [
                        [("Origin", "https://attacker.example")],
                        [("Origin", "null")],
                        [("Origin", "http://\(host).attacker.example")],
                        [("Referer", "https://attacker.example/form.html")],
                        [("Sec-Fetch-Site", "cross-site"), ("Origin", "http://\(host)")],
                        [("Sec-Fetch-Site", "same-site")],
                        [],  // names no site: a browser whose Origin and Referer were suppressed, or a script
                    ]
                    for headers in crossSite {
                        var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": declined])
                        let response = try await visitor.post("/consent", form: "consent=accept", headers: headers, asBrowser: false)
                        #expect(response.status == 403, "\(headers)")
                        #expect(response.setCookieHeaders.isEmpty)
                        #expect(TestVisitorState.open(visitor.cookies["pp_state"])?.consent == false, "consent unchanged")
                    }
                    let sameSite: [[(String, String)]] = [
                        [("Origin", "http://\(host)")],
                        [("Origin", "https://\(host.uppercased())")],
                        [("Referer", "http://\(host)/first?x=1")],
                        [("Sec-Fetch-Site", "same-origin"), ("Origin", "http://\(host)")],
                    ]
                    for headers in sameSite {
                        var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": declined])
                        let response = try await visitor.post("/consent", form: "consent=accept", headers: headers)
                        #expect(response.status == 303, "\(headers)")
                        #expect(TestVisitorState.open(visitor.cookies["pp_state"])?.consent == true, "\(headers)")
                    }
                }
            }
        }
    }

    @Test func cookiesAreSecureHttpOnlyAndSameSiteLaxUnlessSecureIsTurnedOff() async throws {
        try await withLocalAPIServer { server in
            for secure in [true, false] {
                try await withApp(server, configure: { $0.secureCookies = secure }) { baseURL, _ in
                    try await withHTTPClient { client in
                        var visitor = Visitor(baseURL: baseURL, client: client)
                        let consent = try await visitor.post("/consent", form: "consent=accept")
                        let page = try await visitor.get("/")
                        for header in consent.setCookieHeaders + page.setCookieHeaders {
                            let attributes = Set(header.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
                            #expect(attributes.contains("httponly"), "\(header)")
                            #expect(attributes.contains("samesite=lax"), "\(header)")
                            #expect(attributes.contains("path=/"), "\(header)")
                            #expect(attributes.contains("secure") == secure, "\(header)")
                        }
                        #expect(consent.setCookieHeaders.count == 1 && page.setCookieHeaders.count == 1)
                    }
                }
            }
        }
    }
}
