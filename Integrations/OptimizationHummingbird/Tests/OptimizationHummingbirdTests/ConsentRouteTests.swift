import HummingbirdTesting
import Optimization
import OptimizationHummingbird
import OptimizationTesting
import Testing

/// The consent route: the visitor's choice in the state cookie, only from this site; what leaves
/// for the APIs follows it.
@Suite struct ConsentRouteTests {
    @Test func acceptedConsentStoresTheProfileAndViewsReachInsights() async throws {
        try await withLocalAPIServer { server in
            try await withTestApp(server) { client, app in
                let consent = try await client.send(.post, "/consent", form: "consent=accept")
                #expect(consent.status == .seeOther)
                #expect(consent.headers[.location] == "/")
                let accepted = try #require(app.setState(consent))
                #expect(accepted.consent == true && accepted.profileId == nil && accepted.nonce != nil, "the choice and the visitor's nonce")
                let page = try await client.send(.get, "/", cookie: "\(app.cookies.name)=\(try #require(app.setCookieValue(consent)))")
                #expect(page.status == .ok)
                let state = try #require(app.setState(page))
                #expect(state.consent == true && state.profileId != nil, "the profile is stored with consent")
                let events = server.requests(matching: .experience).compactMap { $0.json?["events"]?.arrayValue }.joined()
                #expect(!events.isEmpty && events.allSatisfy { $0["context"]?["gdpr"]?["isConsentGiven"] == true })
            } afterShutdown: { _ in
                let views = server.insightsEvents.filter { $0["type"] == "component" }
                #expect(views.count == 1, "the consented view was sent")
                #expect(views.first?["componentId"] == .string(Fixtures.heroBaseline))
            }
        }
    }

    @Test func declinedConsentDropsTheProfileAndNothingUnconsentedIsSent() async throws {
        try await withLocalAPIServer { server in
            try await withTestApp(server) { client, app in
                let before = app.cookie(VisitorState(profileId: "visitor-d", consent: true))
                let consent = try await client.send(.post, "/consent", cookie: before, form: "consent=decline")
                #expect(consent.status == .seeOther)
                #expect(app.setState(consent) == VisitorState(consent: false), "declining keeps the choice alone")
                let declined = "\(app.cookies.name)=\(try #require(app.setCookieValue(consent)))"
                let page = try await client.send(.get, "/", cookie: declined)
                #expect(page.status == .ok)
                #expect(page.headers[values: .setCookie].isEmpty, "nothing stored without consent")
                // Only the allow-listed page event went to the Experience API, marked unconsented.
                let events = server.requests(matching: .experience).compactMap { $0.json?["events"]?.arrayValue }.joined()
                #expect(events.count == 1)
                #expect(events.allSatisfy { $0["type"] == "page" && $0["context"]?["gdpr"]?["isConsentGiven"] == false })
                #expect(server.requests(matching: .experience).allSatisfy { !$0.path.contains("visitor-d") })
                #expect(try await client.send(.post, "/consent", form: "consent=maybe").status == .badRequest)
            } afterShutdown: { _ in
                #expect(server.requests(matching: .insights).isEmpty, "no view without consent, even after the shutdown flush")
            }
        }
    }

    @Test func aCrossSiteConsentPostIsRefusedAndLeavesConsentUnchanged() async throws {
        try await withLocalAPIServer { server in
            try await withTestApp(server) { client, app in
                let declined = app.cookie(VisitorState(consent: false))
                // HummingbirdTesting's router client sends requests for `localhost`.
                let crossSite: [[(String, String)]] = [
                    [("Origin", "https://attacker.example")],
                    [("Origin", "null")],
                    [("Origin", "http://localhost.attacker.example")],
                    [("Referer", "https://attacker.example/form.html")],
                    [("Sec-Fetch-Site", "cross-site"), ("Origin", "http://localhost")],
                    [("Sec-Fetch-Site", "same-site")],
                    [],  // names no site: a browser whose Origin and Referer were suppressed, or a script
                ]
                for headers in crossSite {
                    let response = try await client.send(.post, "/consent", cookie: declined, headers: headers, form: "consent=accept", asBrowser: false)
                    #expect(response.status == .forbidden, "\(headers)")
                    #expect(response.headers[values: .setCookie].isEmpty, "consent unchanged: \(headers)")
                }
                let sameSite: [[(String, String)]] = [
                    [("Origin", "http://localhost")],
                    [("Referer", "https://LOCALHOST/page?x=1")],
                    [("Sec-Fetch-Site", "same-origin"), ("Origin", "https://attacker.example")],
                ]
                for headers in sameSite {
                    let response = try await client.send(.post, "/consent", cookie: declined, headers: headers, form: "consent=accept", asBrowser: false)
                    #expect(response.status == .seeOther, "\(headers)")
                    #expect(app.setState(response)?.consent == true, "\(headers)")
                }
            }
        }
    }

    @Test(arguments: [true, false])
    func cookiesAreHttpOnlyLaxAndSecureUnlessTurnedOff(secure: Bool) async throws {
        try await withLocalAPIServer { server in
            try await withTestApp(server, secureCookies: secure) { client, app in
                let consent = try await client.send(.post, "/consent", form: "consent=accept")
                let page = try await client.send(.get, "/", cookie: "\(app.cookies.name)=\(try #require(app.setCookieValue(consent)))")
                let headers = consent.headers[values: .setCookie] + page.headers[values: .setCookie]
                #expect(headers.count == 2)
                for header in headers {
                    let attributes = Set(header.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
                    #expect(attributes.contains("httponly"), "\(header)")
                    #expect(attributes.contains("samesite=lax"), "\(header)")
                    #expect(attributes.contains("path=/"), "\(header)")
                    #expect(attributes.contains("max-age=\(VisitorCookies.maxAge)"), "\(header)")
                    #expect(attributes.contains("secure") == secure, "\(header)")
                }
            }
        }
    }
}
