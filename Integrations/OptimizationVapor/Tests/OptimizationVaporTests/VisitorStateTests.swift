import Foundation
import Optimization
import OptimizationTesting
import OptimizationVapor
import Testing
import VaporTesting

/// `OptimizationMiddleware` and `req.optimization`: each request's `OptimizationRequest` comes from
/// the visitor's signed state cookie, and the response stores what it learned, with consent only.
@Suite struct VisitorStateTests {
    @Test func aNewVisitorSeesAPersonalizedPageAndIsRememberedOnlyAfterConsenting() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server) { harness in
                let stranger = try await harness.send(.GET, "/")
                #expect(stranger.status == .ok)
                #expect(stranger.text == WebIntegrationFixtures.heroForNewVisitor)
                #expect(stranger.headers[.setCookie].isEmpty, "no consent: nothing stored")

                let consented = try await harness.send(.GET, "/", cookie: harness.cookie(VisitorState(consent: true)))
                #expect(consented.text == WebIntegrationFixtures.heroForNewVisitor)
                let stored = try #require(harness.storedState(consented))
                let profileId = try #require(stored.profileId, "the new profile is stored")
                #expect(stored.consent == true && stored.selections != nil)
                let pageCalls = server.requests(matching: .experience)
                #expect(pageCalls.count == 2 && pageCalls.allSatisfy { !$0.path.contains("/profiles/") })
                #expect(pageCalls.last?.json?["events"]?[0]?["context"]?["page"]?["path"] == "/")

                let returned: String = try #require(harness.returnedCookie(consented))
                let back = try await harness.send(.GET, "/", cookie: returned)
                #expect(back.status == .ok)
                #expect(server.requests(matching: .experience).last?.path.hasSuffix("/profiles/\(profileId)") == true)
                #expect(back.headers[.setCookie].isEmpty, "unchanged state: the browser keeps its cookie")
            }
        }
    }

    @Test func aReturningVisitorSeesItsOwnVariant() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            server.setExperienceData(perProfile: { $0 == "vapor-regular" ? LocalOptimizationAPIServer.defaultIdentifiedVisitorData : nil })
            try await withVaporHarness(server) { harness in
                let regular = harness.cookie(VisitorState(profileId: "vapor-regular", consent: true))
                #expect(try await harness.send(.GET, "/state", cookie: regular).text == "vapor-regular")
                let page = try await harness.send(.GET, "/", cookie: regular, headers: [("Accept-Language", "fr-CH, fr;q=0.9")])
                #expect(page.text == WebIntegrationFixtures.heroForIdentified)
                let call = try #require(server.requests(matching: .experience).last)
                #expect(call.path.hasSuffix("/profiles/vapor-regular"))
                #expect(call.json?["events"]?[0]?["context"]?["locale"] == "fr-CH")
                let stored = try #require(harness.storedState(page))
                #expect(stored.profileId == "vapor-regular" && stored.selections != nil)
            }
        }
    }

    @Test func aTamperedCookieIsIgnoredAndTheForgedProfileNeverLeaves() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server) { harness in
                let genuine = harness.cookies.codec.seal(VisitorState(profileId: "vapor-genuine", consent: true))
                let before = harness.cookies.codec.rejectedCount
                for forged in VisitorStateForgery.values(claiming: "vapor-forged", genuine: genuine) {
                    let cookie = "\(harness.cookies.name)=\(forged)"
                    #expect(try await harness.send(.GET, "/state", cookie: cookie).text == "new")
                    let page = try await harness.send(.GET, "/", cookie: cookie)
                    #expect(page.text == WebIntegrationFixtures.heroForNewVisitor)
                    #expect(page.headers[.setCookie].isEmpty)
                }
                #expect(harness.cookies.codec.rejectedCount == before + 6)
                // The app's own seal of that profile opens: the forgeries above were refused for their seal.
                #expect(try await harness.send(.GET, "/state", cookie: harness.cookie(VisitorState(profileId: "vapor-forged"))).text == "vapor-forged")
            } afterShutdown: { _ in
                #expect(!server.requests.contains { $0.path.contains("vapor-forged") || $0.body.contains("vapor-forged") })
                #expect(server.insightsEvents.isEmpty)
            }
        }
    }

    @Test func misusesAreClearErrorsNotCrashes() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server) { harness in
                let unprepared = try await harness.send(.GET, "/unprepared")
                #expect(unprepared.status == .internalServerError, "req.optimization without the middleware")
                #expect(throws: OptimizationVaporError.alreadyConfigured) {
                    try harness.app.optimization.configure(service: harness.service, cookies: harness.cookies)
                }
                #expect(try harness.app.optimization.service === harness.service)
            }
        }
        let bare = try await Application.make(.testing)
        #expect(throws: OptimizationVaporError.notConfigured) { _ = try bare.optimization.service }
        bare.grouped(OptimizationMiddleware()).get("page") { _ in "never" }
        let response = try await bare.testing().sendRequest(.GET, "/page")
        #expect(response.status == .internalServerError, "the middleware before app.optimization.configure")
        try await bare.asyncShutdown()
    }
}
