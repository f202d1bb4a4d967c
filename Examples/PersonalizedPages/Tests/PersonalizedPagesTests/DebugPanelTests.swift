import AsyncHTTPClient
import Optimization
import OptimizationTesting
import Testing

/// The `?debug=1` panel over real HTTP: one row per entry with its experience, the variant shown
/// and the reason (selected, baseline, no selection, consent), as the library resolved them.
@Suite(.hangBound) struct DebugPanelTests {
    /// visitor-a: the hero personalization's variant 1; visitor-zero: the hero experiment's baseline
    /// (variant 0); everyone else: the local API's defaults.
    static func experienceData(forProfile id: String) -> JSONValue? {
        let profile = LocalOptimizationAPIServer.defaultNewVisitorData["profile"] ?? .null
        switch id {
        case "visitor-a", "visitor-zero":
            return ["profile": profile, "experiences": [id == "visitor-a"
                ? ["experienceId": "6TgHn2JdQw8rYv5XkLc0Bs", "variantIndex": 1, "variants": [.init(stringLiteral: PageIDs.hero): .string(PageIDs.heroPersonalized)]]
                : ["experienceId": "4HsYb1VmKr6PfQz9LdXe3T", "variantIndex": 0, "variants": [:]]], "changes": []]
        default:
            return nil
        }
    }

    /// The panel's row of `baselineId`.
    static func row(_ baselineId: String, in body: String) -> String? {
        PageMarkupTests.fragment(from: #"<tr data-debug-entry="\#(baselineId)""#, to: "</tr>", in: body)
    }

    @Test func selectedAndNoSelection() async throws {
        try await withLocalAPIServer { server in
            server.setExperienceData(perProfile: { Self.experienceData(forProfile: $0) })
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: "visitor-a", consent: true)])
                    let page = try await visitor.get("/?debug=1")
                    #expect(page.body.contains(#"<section class="debug" id="optimization-debug""#))
                    #expect(page.body.contains("Experience call: delivered"))
                    let hero = try #require(Self.row(PageIDs.hero, in: page.body))
                    #expect(hero.contains(#"data-reason="selected""#))
                    #expect(hero.contains("[Personalization] Returning visitors hero<br><code>6TgHn2JdQw8rYv5XkLc0Bs</code>"))
                    #expect(hero.contains("Variant 1<br><code>\(PageIDs.heroPersonalized)</code>"))
                    #expect(hero.contains("The visitor's profile selected this variant."))
                    // The promo strip's experiences are not among the profile's selections.
                    let promo = try #require(Self.row(PageIDs.promo, in: page.body))
                    #expect(promo.contains(#"data-reason="no selection""#))
                    #expect(promo.contains("<code>expStripNotIncluded</code>") && promo.contains("Promo strip for newsletter readers<br><code>expStripResolved</code>"))
                    #expect(promo.contains("Baseline<br><code>\(PageIDs.promo)</code>"))
                    #expect(try #require(Self.row(PageIDs.article, in: page.body)).contains(#"data-reason="no selection""#))
                    // The panel does not disturb what tests read from the sections.
                    #expect(page.renderedEntries == [PageIDs.hero: PageIDs.heroPersonalized, PageIDs.promo: PageIDs.promo, PageIDs.article: PageIDs.article])
                }
            }
        }
    }

    @Test func baseline() async throws {
        try await withLocalAPIServer { server in
            server.setExperienceData(perProfile: { Self.experienceData(forProfile: $0) })
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: "visitor-zero", consent: true)])
                    let page = try await visitor.get("/?debug=1")
                    #expect(page.renderedEntries[PageIDs.hero] == PageIDs.hero)
                    let hero = try #require(Self.row(PageIDs.hero, in: page.body))
                    #expect(hero.contains(#"data-reason="baseline""#))
                    #expect(hero.contains("[Experiment] Hero headline test<br><code>4HsYb1VmKr6PfQz9LdXe3T</code>"))
                    #expect(hero.contains("Baseline<br><code>\(PageIDs.hero)</code>"))
                    #expect(hero.contains("The visitor's profile selected the baseline."))
                }
            }
        }
    }

    @Test func consentWhenNothingMayLeaveBeforeConsent() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server, configure: { $0.strictConsent = true }) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client)
                    let page = try await visitor.get("/?debug=1")
                    #expect(page.body.contains("Experience call: blocked (consent)"))
                    for id in [PageIDs.hero, PageIDs.promo, PageIDs.article] {
                        let row = try #require(Self.row(id, in: page.body))
                        #expect(row.contains(#"data-reason="consent""#))
                        #expect(row.contains("Baseline<br><code>\(id)</code>"))
                    }
                    #expect(server.requests.isEmpty, "the page event was blocked")
                    // After accepting, the same visitor is personalized: the default selections' hero variant.
                    #expect(try await visitor.post("/consent", form: "consent=accept").status == 303)
                    let accepted = try await visitor.get("/?debug=1")
                    #expect(try #require(Self.row(PageIDs.hero, in: accepted.body)).contains(#"data-reason="selected""#))
                    #expect(try #require(Self.row(PageIDs.promo, in: accepted.body)).contains(#"data-reason="no selection""#))
                }
            }
        }
    }

    @Test func consentWhenTheStateMayNotKeepSelections() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    // Declined: the state cookie holds the choice alone, so the handoff page has no selections.
                    var declined = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(consent: false)])
                    let page = try await declined.get("/handoff?debug=1")
                    #expect(page.body.contains("Experience call: none (selections from the state cookie)"))
                    #expect(try #require(Self.row(PageIDs.hero, in: page.body)).contains(#"data-reason="consent""#))
                    // Consented but without selections yet: nothing selected, not a consent matter.
                    var consented = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(consent: true)])
                    let other = try await consented.get("/handoff?debug=1")
                    #expect(try #require(Self.row(PageIDs.hero, in: other.body)).contains(#"data-reason="no selection""#))
                }
            }
        }
    }
}
