import AsyncHTTPClient
import Optimization
import OptimizationTesting
import Testing

/// What a visitor sees, over real HTTP: the entries' visible fields (never the CMS's internal
/// titles), rich text as separate paragraphs with merge tags and their fallback, images (or
/// their placeholders), calls to action, and the consent banner that says what each choice does.
@Suite(.hangBound) struct PageMarkupTests {
    /// Visitors without selections: visitor-ada's profile knows her first name, visitor-anonymous's
    /// knows no traits.
    static func experienceData(forProfile id: String) -> JSONValue? {
        guard id == "visitor-ada" || id == "visitor-anonymous",
              case .object(var profile) = LocalOptimizationAPIServer.defaultNewVisitorData["profile"] ?? .null
        else { return nil }
        profile["id"] = .string(id)
        profile["traits"] = id == "visitor-ada" ? ["firstName": "Ada"] : [:]
        return ["profile": .object(profile), "experiences": [], "changes": []]
    }

    /// The `<section>` rendering `baselineId`.
    static func section(_ baselineId: String, in body: String) -> String? {
        fragment(from: #"<section data-baseline="\#(baselineId)""#, to: "</section>", in: body)
    }

    /// The text of `body` from the first `start` to the next `end`, both included.
    static func fragment(from start: String, to end: String, in body: String) -> String? {
        guard let opening = body.range(of: start), let closing = body[opening.upperBound...].range(of: end) else { return nil }
        return String(body[opening.lowerBound..<closing.upperBound])
    }

    @Test func richTextRendersParagraphsMarksAndTheMergeTagFallback() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client)
                    let page = try await visitor.get("/plain")
                    let hero = try #require(Self.section(PageIDs.hero, in: page.body))
                    #expect(hero.contains("<h1>Fresh gear for every trail</h1>"))
                    #expect(hero.contains(#"<p>Hello <span class="merge-tag">explorer</span>, our spring collection has landed.</p>"#))
                    #expect(hero.contains("<p><strong>Free returns for 60 days</strong> on every order.</p>"))
                    #expect(hero.contains(#"<a class="button" href="/collections/spring">Shop the collection</a>"#))
                    // The image is an unresolved asset link: a placeholder of the image's size, labelled.
                    #expect(hero.contains(#"<div class="media placeholder" role="img" aria-label="Fresh gear for every trail" data-asset="6wYp0NbR4sUe2Hk8JvT1qD">"#))
                    let promo = try #require(Self.section(PageIDs.promo, in: page.body))
                    #expect(promo.contains("<p>Members get early access.</p>"))
                    // The article's embedded callout is its own block between two paragraphs; its inline link
                    // to the article points at the article's section, labelled with the article's heading.
                    let article = try #require(Self.section(PageIDs.article, in: page.body))
                    #expect(article.contains(#"id="entry-articleTrailBaseline" class="article">"#))
                    #expect(article.contains("<h2>From the trail journal</h2>"))
                    #expect(article.contains("""
                        <p>Before you go: </p>
                        <aside class="callout">
                        <p>Read more in <a href="#entry-articleTrailBaseline">From the trail journal</a>.</p>
                        </aside>
                        <p>Happy hiking.</p>
                        """))
                    #expect(!page.body.contains("[Baseline]") && !page.body.contains("internalTitle") && !page.body.contains("Trail safety callout"),
                            "CMS-internal titles are never shown")
                }
            }
        }
    }

    @Test func mergeTagsTakeTheVisitorsProfileValueOnThePersonalizedPage() async throws {
        try await withLocalAPIServer { server in
            server.setExperienceData(perProfile: { Self.experienceData(forProfile: $0) })
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var ada = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: "visitor-ada", consent: true)])
                    let page = try await ada.get("/")
                    #expect(page.renderedEntries[PageIDs.hero] == PageIDs.hero)
                    #expect(page.body.contains(#"<p>Hello <span class="merge-tag">Ada</span>, our spring collection has landed.</p>"#))
                    // A profile without the trait gets the tag's fallback.
                    var newcomer = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: "visitor-anonymous", consent: true)])
                    let other = try await newcomer.get("/")
                    #expect(other.renderedEntries[PageIDs.hero] == PageIDs.hero)
                    #expect(other.body.contains(#"<p>Hello <span class="merge-tag">explorer</span>, our spring collection has landed.</p>"#))
                }
            }
        }
    }

    @Test func aVariantShowsItsOwnHeadlineAndCallToAction() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    // The local API's default selections put every visitor into the hero experiment's variant 1.
                    var visitor = Visitor(baseURL: baseURL, client: client)
                    let page = try await visitor.get("/")
                    #expect(page.renderedEntries[PageIDs.hero] == "5pNs7JcXq2LmRb9VtKw1Hz")
                    let hero = try #require(Self.section(PageIDs.hero, in: page.body))
                    #expect(hero.contains("<h1>Spring gear, 20% off this week</h1>"))
                    #expect(hero.contains(#"<a class="button" href="/collections/spring">Grab the deal</a>"#), "the baseline's link, the variant's label")
                    #expect(!page.body.contains("[Variant"))
                }
            }
        }
    }

    @Test func theConsentBannerSaysWhatEachChoiceDoes() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client)
                    let page = try await visitor.get("/")
                    #expect(page.body.contains(#"<form class="consent" method="post" action="/consent" data-consent="not asked""#))
                    #expect(page.body.contains("Accepting sends events about this visit (the pages you view and the content shown to you) to Contentful's Experience and Insights APIs to personalize this site for you"))
                    #expect(page.body.contains("Declining sends no views and keeps no profile: only your choice is stored, and each page view is counted anonymously."))
                    #expect(page.body.contains(#"<button name="consent" value="accept">Accept</button>"#))
                    #expect(page.body.contains(#"<button name="consent" value="decline">Decline</button>"#))
                    // The banner's buttons work: accepting turns it into the status line.
                    #expect(try await visitor.post("/consent", form: "consent=accept").status == 303)
                    let accepted = try await visitor.get("/")
                    #expect(accepted.body.contains(#"data-consent="accepted""#))
                    #expect(accepted.body.contains("Personalization is on"))
                    #expect(!accepted.body.contains("Personalize your visit?"))
                }
            }
        }
    }

    @Test func withStrictConsentTheBannerSaysDecliningSendsNothing() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server, configure: { $0.strictConsent = true }) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client)
                    #expect(try await visitor.get("/").body.contains("Declining sends nothing: only your choice is stored."))
                    #expect(try await visitor.post("/consent", form: "consent=decline").status == 303)
                    let declined = try await visitor.get("/")
                    #expect(declined.body.contains(#"data-consent="declined""#) && declined.body.contains("Personalization is off. Declining sends nothing"))
                    #expect(server.requests.isEmpty, "nothing left before or after declining")
                }
            }
        }
    }

    @Test(arguments: ["/", "/plain", "/handoff", "/events", "/first"])
    func theDebugPanelIsAbsentWithoutDebug(path: String) async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(consent: true)])
                    let page = try await visitor.get(path)
                    #expect(page.status == 200)
                    #expect(page.body.contains("<main>"))
                    #expect(!page.body.contains("optimization-debug") && !page.body.contains("data-reason="))
                    let other = try await visitor.get(path + "?debug=0")
                    #expect(!other.body.contains("optimization-debug"))
                }
            }
        }
    }
}
