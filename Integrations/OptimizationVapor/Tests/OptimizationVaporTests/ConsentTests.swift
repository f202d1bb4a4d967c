import Optimization
import OptimizationTesting
import OptimizationVapor
import Testing
import VaporTesting

/// `addConsentRoute`: the visitor's choice goes into the state cookie, only from this site, and
/// what leaves for the APIs follows it.
@Suite struct ConsentTests {
    @Test func acceptingStoresTheProfileAndTheConsentedViewIsDelivered() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server) { harness in
                let accepted = try await harness.send(.POST, "/consent", form: "consent=accept")
                #expect(accepted.status == .seeOther)
                #expect(accepted.headers.first(name: .location) == "/")
                let stored = try #require(harness.storedState(accepted))
                #expect(stored.consent == true && stored.profileId == nil && stored.nonce != nil, "the choice and the visitor's nonce")
                let consentCookie: String = try #require(harness.returnedCookie(accepted))
                let page = try await harness.send(.GET, "/", cookie: consentCookie)
                #expect(harness.storedState(page)?.profileId != nil, "the profile is stored with consent")
                let sent = server.requests(matching: .experience).compactMap { $0.json?["events"]?.arrayValue }.joined()
                #expect(!sent.isEmpty)
                #expect(sent.allSatisfy { $0["context"]?["gdpr"]?["isConsentGiven"] == true })
            } afterShutdown: { _ in
                let views = server.insightsEvents.filter { $0["type"] == "component" }
                #expect(views.map { $0["componentId"] } == [.string(WebIntegrationFixtures.heroBaseline)], "the consented view, once")
            }
        }
    }

    @Test func decliningForgetsTheProfileAndNothingUnconsentedLeaves() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server) { harness in
                let known = harness.cookie(VisitorState(profileId: "vapor-decliner", consent: true))
                let declined = try await harness.send(.POST, "/consent", cookie: known, form: "consent=decline")
                #expect(declined.status == .seeOther)
                #expect(harness.storedState(declined) == VisitorState(consent: false), "only the choice is kept")
                let declinedCookie: String = try #require(harness.returnedCookie(declined))
                let page = try await harness.send(.GET, "/", cookie: declinedCookie)
                #expect(page.status == .ok)
                #expect(page.headers[.setCookie].isEmpty)
                let sent = server.requests(matching: .experience).compactMap { $0.json?["events"]?.arrayValue }.joined()
                #expect(sent.map { $0["type"] } == ["page"], "only the allow-listed page event")
                #expect(sent.first?["context"]?["gdpr"]?["isConsentGiven"] == false)
                #expect(!server.requests.contains { $0.path.contains("vapor-decliner") })
                #expect(try await harness.send(.POST, "/consent", form: "consent=later").status == .badRequest)
                #expect(try await harness.send(.POST, "/consent", form: "consent=" + String(repeating: "a", count: 5000)).status == .payloadTooLarge)
            } afterShutdown: { _ in
                #expect(server.requests(matching: .insights).isEmpty, "no view, even after the shutdown flush")
            }
        }
    }

    @Test func aPostFromAnotherSiteIsRefusedAndChangesNothing() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server) { harness in
                let declined = harness.cookie(VisitorState(consent: false))
                // The in-memory requests are for `Host: localhost`.
                let verdicts: [([(String, String)], HTTPStatus)] = [
                    ([("Origin", "https://evil.example")], .forbidden), ([("Origin", "null")], .forbidden),
                    ([("Referer", "http://evil.example/x")], .forbidden), ([("Origin", "http://localhost.evil.example")], .forbidden),
                    ([("Sec-Fetch-Site", "cross-site")], .forbidden), ([("Sec-Fetch-Site", "same-site")], .forbidden),
                    ([("Origin", "http://localhost")], .seeOther), ([("Referer", "https://LocalHost/consent-form")], .seeOther),
                    ([("Sec-Fetch-Site", "same-origin")], .seeOther),
                    ([], .forbidden),  // names no site: a browser whose Origin and Referer were suppressed, or a script
                ]
                for (headers, verdict) in verdicts {
                    let answer = try await harness.send(.POST, "/consent", cookie: declined, headers: headers, form: "consent=accept", asBrowser: false)
                    #expect(answer.status == verdict, "\(headers)")
                    #expect(harness.storedState(answer)?.consent == (verdict == .seeOther ? true : nil), "refused: consent unchanged, \(headers)")
                }
            }
        }
    }

    @Test(arguments: [false, true])
    func theCookieIsHttpOnlyLaxAndSecureUnlessTurnedOff(secure: Bool) async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server, HarnessOptions(secureCookies: secure)) { harness in
                let response = try await harness.send(.POST, "/consent", form: "consent=accept")
                let written = try #require(response.headers[.setCookie].first)
                #expect(written.contains("; Max-Age=\(VisitorCookies.maxAge); Path=/; "))
                #expect(written.hasSuffix(secure ? "; Secure; HttpOnly; SameSite=Lax" : "; HttpOnly; SameSite=Lax"))
            }
        }
    }
}
