import Foundation
import HummingbirdTesting
import Optimization
import OptimizationHummingbird
import OptimizationTesting
import Testing

/// The middleware: each request gets its `OptimizationRequest` from the visitor's signed state
/// cookie, and the response stores what the request learned (with consent only). Requests go to
/// the test kit's Experience and Insights APIs on loopback.
@Suite struct PersonalizationTests {
    @Test func aNewVisitorGetsAPersonalizedPageAndItsProfileIsStoredOnlyWithConsent() async throws {
        try await withLocalAPIServer { server in
            try await withTestApp(server) { client, app in
                // No cookie at all: personalized (the page event is allowed before consent), nothing stored.
                let anonymous = try await client.send(.get, "/")
                #expect(anonymous.status == .ok)
                #expect(anonymous.text == Fixtures.heroForNewVisitor)
                #expect(anonymous.headers[values: .setCookie].isEmpty, "nothing stored without consent")

                // A visitor who consented but has no profile yet: the new profile is stored.
                let page = try await client.send(.get, "/", cookie: app.cookie(VisitorState(consent: true)))
                #expect(page.status == .ok)
                #expect(page.text == Fixtures.heroForNewVisitor)
                let state = try #require(app.setState(page), "the state cookie is written")
                let profileId = try #require(state.profileId)
                #expect(state.consent == true)
                #expect(state.selections != nil, "the selections are handed to the next page")
                let calls = server.requests(matching: .experience)
                #expect(calls.count == 2)
                #expect(calls.allSatisfy { !$0.path.contains("/profiles/") }, "both were new visitors")
                #expect(calls.last?.json?["events"]?[0]?["context"]?["page"]?["path"] == "/")
                #expect(calls.last?.json?["events"]?[0]?["context"]?["gdpr"]?["isConsentGiven"] == true)

                // Its next request comes back with the cookie: the same profile.
                let again = try await client.send(.get, "/", cookie: "\(app.cookies.name)=\(try #require(app.setCookieValue(page)))")
                #expect(again.status == .ok)
                #expect(server.requests(matching: .experience).last?.path.hasSuffix("/profiles/\(profileId)") == true)
                #expect(again.headers[values: .setCookie].isEmpty, "nothing changed: the browser keeps its cookie")
            }
        }
    }

    @Test func aReturningVisitorIsPersonalizedForItsProfile() async throws {
        try await withLocalAPIServer { server in
            server.setExperienceData(perProfile: { $0 == "returning-visitor" ? LocalOptimizationAPIServer.defaultIdentifiedVisitorData : nil })
            try await withTestApp(server) { client, app in
                let cookie = app.cookie(VisitorState(profileId: "returning-visitor", consent: true))
                #expect(try await client.send(.get, "/state", cookie: cookie).text == "returning-visitor")
                let page = try await client.send(.get, "/", cookie: cookie, headers: [("Accept-Language", "de-DE,de;q=0.9")])
                #expect(page.status == .ok)
                #expect(page.text == Fixtures.heroForIdentified, "the returning visitor's own selections")
                let call = try #require(server.requests(matching: .experience).last)
                #expect(call.path.hasSuffix("/profiles/returning-visitor"))
                #expect(call.json?["events"]?[0]?["context"]?["locale"] == "de-DE")
                let state = try #require(app.setState(page))
                #expect(state.profileId == "returning-visitor" && state.consent == true && state.selections != nil)

            }
        }
    }

    @Test func aTamperedCookieIsANewVisitorAndNothingIsSentForTheForgedProfile() async throws {
        try await withLocalAPIServer { server in
            try await withTestApp(server) { client, app in
                let genuine = app.cookies.codec.seal(VisitorState(profileId: "genuine-visitor", consent: true))
                // Another key, the app's MAC over another payload, unsigned.
                let forged = VisitorStateForgery.values(claiming: "forged-profile", genuine: genuine)
                let rejectedBefore = app.cookies.codec.rejectedCount
                for value in forged {
                    let cookie = "\(app.cookies.name)=\(value)"
                    #expect(try await client.send(.get, "/state", cookie: cookie).text == "new")
                    let page = try await client.send(.get, "/", cookie: cookie)
                    #expect(page.status == .ok)
                    #expect(page.text == Fixtures.heroForNewVisitor, "a new visitor's page")
                    #expect(page.headers[values: .setCookie].isEmpty, "a new visitor without consent: nothing stored")
                }
                #expect(app.cookies.codec.rejectedCount == rejectedBefore + 6, "every forged cookie counted")
                #expect(server.requests(matching: .experience).allSatisfy { !$0.path.contains("/profiles/") }, "every page was a new visitor's")
                // The app's own seal of the same name does open (the test would pass vacuously otherwise).
                let sealed = "\(app.cookies.name)=\(app.cookies.codec.seal(VisitorState(profileId: "forged-profile", consent: true)))"
                #expect(try await client.send(.get, "/state", cookie: sealed).text == "forged-profile")
            } afterShutdown: { _ in
                let mentions = server.requests.filter { $0.path.contains("forged-profile") || $0.body.contains("forged-profile") }
                #expect(mentions.isEmpty, "no event of the forged profile reached either API")
                #expect(server.insightsEvents.isEmpty, "no consent, no views")
            }
        }
    }

    @Test func beforeTheMiddlewareTheContextHasNoRequest() {
        let empty = OptimizationContext()
        #expect(!empty.isPrepared)
        #expect(throws: (any Error).self) { _ = try empty.request }
        #expect(empty.visitorState == VisitorState())
    }
}
