import AsyncHTTPClient
import Foundation
import Optimization
import OptimizationTesting
import PersonalizedPagesApp
import Testing

/// The example service end to end: the app in process on an ephemeral port, real HTTP requests,
/// the test kit's local API server behind it.
@Suite(.hangBound) struct PersonalizedPagesTests {
    /// Visitor A is selected into the hero personalization, visitor B into the promo strip and
    /// article experiments; anyone else gets the server's default data.
    static func experienceData(forProfile id: String) -> JSONValue? {
        let profile = LocalOptimizationAPIServer.defaultNewVisitorData["profile"] ?? .null
        let experiences: JSONValue
        switch id {
        case "visitor-a":
            experiences = [
                ["experienceId": "6TgHn2JdQw8rYv5XkLc0Bs", "variantIndex": 1, "variants": [.init(stringLiteral: PageIDs.hero): .string(PageIDs.heroPersonalized)]],
            ]
        case "visitor-b":
            experiences = [
                ["experienceId": "expStripResolved", "variantIndex": 1, "variants": ["promoStripBaseline": "promoStripVariant"]],
                ["experienceId": "expArticleIntro", "variantIndex": 1, "variants": ["articleTrailBaseline": "articleTrailVariant"]],
            ]
        default:
            return nil
        }
        return ["profile": profile, "experiences": experiences, "changes": []]
    }

    @Test func twoVisitorsWithDifferentSelectionsGetDifferentVariants() async throws {
        try await withLocalAPIServer { server in
            server.setExperienceData(perProfile: { Self.experienceData(forProfile: $0) })
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var a = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: "visitor-a", consent: true)])
                    var b = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: "visitor-b", consent: true)])
                    let pageA = try await a.get("/")
                    let pageB = try await b.get("/")
                    #expect(pageA.status == 200 && pageB.status == 200)
                    #expect(pageA.renderedEntries == [PageIDs.hero: PageIDs.heroPersonalized, PageIDs.promo: PageIDs.promo, PageIDs.article: PageIDs.article])
                    #expect(pageB.renderedEntries == [PageIDs.hero: PageIDs.hero, PageIDs.promo: PageIDs.promoVariant, PageIDs.article: PageIDs.articleVariant])
                    // Each page view made one Experience call, for its own profile.
                    let paths = server.requests(matching: .experience).map(\.path)
                    #expect(paths.count == 2)
                    #expect(paths.contains { $0.hasSuffix("/profiles/visitor-a") } && paths.contains { $0.hasSuffix("/profiles/visitor-b") })
                    // The plain page renders baselines without the engine.
                    let plain = try await a.get("/plain")
                    #expect(plain.renderedEntries == [PageIDs.hero: PageIDs.hero, PageIDs.promo: PageIDs.promo, PageIDs.article: PageIDs.article])
                    #expect(server.requests(matching: .experience).count == 2)
                }
            }
        }
    }

    @Test func withoutConsentOnlyThePageEventLeavesAndNoViews() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, app in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client)
                    let page = try await visitor.get("/")
                    #expect(page.status == 200)
                    #expect(page.body.contains(#"data-consent="not asked""#))
                    #expect(page.setCookies.isEmpty, "nothing stored without persistence consent")
                    // Declining is recorded, and still nothing but `page` leaves.
                    let declined = try await visitor.post("/consent", form: "consent=decline")
                    #expect(declined.status == 303 && declined.location == "/")
                    #expect(Array(visitor.cookies.keys) == ["pp_state"])
                    #expect(TestVisitorState.open(visitor.cookies["pp_state"]) == VisitorState(consent: false))
                    _ = try await visitor.get("/")
                    await app.service.flush()
                    let events = server.requests(matching: .experience).compactMap { $0.json?["events"]?.arrayValue }.flatMap { $0 }
                    #expect(events.map { $0["type"]?.stringValue } == ["page", "page"])
                    #expect(events.allSatisfy { $0["context"]?["gdpr"]?["isConsentGiven"] == false })
                    #expect(server.requests(matching: .insights).isEmpty, "no view event leaves without consent")
                    #expect(server.insightsEvents.isEmpty)
                }
            }
        }
    }

    @Test func afterConsentViewsLeaveWithTheVisitorsProfile() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, app in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client)
                    let consent = try await visitor.post("/consent", form: "consent=accept")
                    #expect(consent.status == 303)
                    let accepted = TestVisitorState.open(visitor.cookies["pp_state"])
                    #expect(accepted?.consent == true && accepted?.profileId == nil && accepted?.nonce != nil)

                    let first = try await visitor.get("/", headers: [("Accept-Language", "de-DE,de;q=0.9")])
                    let state = try #require(TestVisitorState.open(first.setCookies["pp_state"]), "state written with persistence consent")
                    let profileId = try #require(state.profileId, "the profile id is stored")
                    #expect(state.consent == true)
                    #expect(state.selections != nil, "selections handed off")
                    let firstEvent = try #require(server.requests(matching: .experience).first?.json?["events"]?[0])
                    #expect(firstEvent["type"] == "page")
                    #expect(firstEvent["context"]?["gdpr"]?["isConsentGiven"] == true)
                    #expect(firstEvent["context"]?["userAgent"] == "personalized-pages-tests")
                    #expect(firstEvent["context"]?["locale"] == "de-DE")
                    #expect(firstEvent["context"]?["page"]?["path"] == "/")

                    let second = try await visitor.get("/")
                    #expect(second.status == 200)
                    #expect(server.requests(matching: .experience).last?.path.hasSuffix("/profiles/\(profileId)") == true, "the cookie's profile is used")

                    await app.service.flush()
                    let batches = server.insightsBatches
                    #expect(!batches.isEmpty)
                    #expect(batches.allSatisfy { $0["profile"]?["id"]?.stringValue == profileId })
                    let views = server.insightsEvents.filter { $0["type"] == "component" }
                    #expect(views.count == 6, "one view per rendered entry, two pages of three")
                    #expect(Set(views.compactMap { $0["componentId"]?.stringValue }) == [PageIDs.hero, PageIDs.promo, PageIDs.article])
                    // The default new-visitor selections put the hero into experiment 4HsYb1… variant 1.
                    let heroView = try #require(views.first { $0["componentId"] == .string(PageIDs.hero) })
                    #expect(heroView["experienceId"] == "4HsYb1VmKr6PfQz9LdXe3T")
                    #expect(heroView["variantIndex"] == 1)
                }
            }
        }
    }

    @Test func theHandoffCookieRendersTheSameVariantsWithoutAnExperienceCall() async throws {
        try await withLocalAPIServer { server in
            server.setExperienceData(perProfile: { Self.experienceData(forProfile: $0) })
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: "visitor-b", consent: true)])
                    let personalized = try await visitor.get("/")
                    #expect(TestVisitorState.open(visitor.cookies["pp_state"])?.selections != nil)
                    let calls = server.requests.count
                    let handoff = try await visitor.get("/handoff")
                    #expect(handoff.renderedEntries == personalized.renderedEntries)
                    #expect(handoff.renderedEntries[PageIDs.promo] == PageIDs.promoVariant)
                    #expect(server.requests.count == calls, "no Experience call, no event")
                    // A state cookie that is not sealed is ignored: baselines.
                    visitor.cookies["pp_state"] = "v1.not-base64!"
                    let tampered = try await visitor.get("/handoff")
                    #expect(tampered.status == 200)
                    #expect(tampered.renderedEntries[PageIDs.promo] == PageIDs.promo)
                }
            }
        }
    }

    @Test func theEventsRouteTracksTheRenderedEntriesWithoutAnExperienceCall() async throws {
        try await withLocalAPIServer { server in
            server.setExperienceData(perProfile: { Self.experienceData(forProfile: $0) })
            try await withApp(server) { baseURL, app in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: "visitor-c", consent: true)])
                    let personalized = try await visitor.get("/")
                    let experienceCalls = server.requests(matching: .experience).count
                    await app.service.flush()
                    let viewsBefore = server.insightsEvents.filter { $0["type"] == "component" }.count
                    let events = try await visitor.get("/events")
                    #expect(events.status == 200)
                    #expect(events.renderedEntries == personalized.renderedEntries, "the handoff selections")
                    await app.service.flush()
                    #expect(server.requests(matching: .experience).count == experienceCalls, "no Experience call")
                    let views = server.insightsEvents.filter { $0["type"] == "component" }
                    #expect(views.count == viewsBefore + 3, "one view per rendered entry")
                }
            }
        }
    }

    @Test func aFirstVisitIsHandedOverAndTheReplayIsCommittedOnce() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(consent: true)])
                    let page = try await visitor.get("/first?campaign=mail")
                    #expect(page.status == 200)
                    #expect(page.cacheControl == "private, no-store")
                    let script = try #require(page.body.firstMatch(of: /<script type="application\/json" id="optimization-handoff">(.*)<\/script>/))
                    let handoff = try #require(OptimizationHandoff(json: try JSONValue(jsonText: String(script.1))))
                    let replay = try #require(handoff.replay)
                    #expect(replay.routeKey == "/first?campaign=mail")
                    #expect(handoff.cacheSafetyWarnings.isEmpty)
                    let preview = try #require(server.requests(matching: .experience).first)
                    #expect(preview.queryValue("type") == "preflight")
                    // The visitor's state now holds the profile the page was evaluated for.
                    #expect(TestVisitorState.open(visitor.cookies["pp_state"])?.profileId == handoff.profileId)
                    // The browser's part: commit the page's replay ticket once.
                    let ticket = try #require(page.body.firstMatch(of: /<script type="application\/json" id="optimization-replay">(.*)<\/script>/))
                    let committed = try await visitor.post("/replay", json: String(ticket.1))
                    #expect(committed.status == 204)
                    let calls = server.requests(matching: .experience)
                    #expect(calls.count == 2)
                    #expect(calls.last?.queryValue("type") == nil)
                    #expect(calls.last?.json?["events"]?.arrayValue == replay.events)
                    #expect(try await visitor.post("/replay", json: "{}").status == 422)
                    #expect(try await visitor.post("/replay", json: String(script.1)).status == 422, "a handoff is not a ticket")
                    #expect(server.requests(matching: .experience).count == 2)
                }
            }
        }
    }

    @Test func healthAndBadConsentForm() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client)
                    let health = try await visitor.get("/healthz")
                    #expect(health.status == 200 && health.body == "ok\n")
                    let bad = try await visitor.post("/consent", form: "consent=maybe")
                    #expect(bad.status == 400)
                    #expect(visitor.cookies.isEmpty)
                }
            }
        }
    }
}
