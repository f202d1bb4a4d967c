import JavaScriptHost
import Optimization
import OptimizationTesting
import OptimizationTestSupport
import OptimizationServiceFace
import OptimizationWeb
import Testing

/// The visitor's own text (`User-Agent`, the URL) is bounded where it enters the library, so an
/// attacker's request cannot enlarge the Insights request that carries other visitors' events
/// (issue 46, F7).
@Suite("Visitor text bounded at the web entry", .hangBound)
struct BoundedVisitorTextTests {
    static func options(profileId: String, path: String, query: String?, userAgent: String?) -> RequestOptions {
        RequestOptions(
            visitorState: VisitorState(profileId: profileId, consent: true), host: "shop.example", path: path, query: query,
            acceptLanguage: nil, userAgent: userAgent)
    }

    @Test func anAttackersSeventyKilobyteUserAgentDoesNotEnlargeAnotherVisitorsBatch() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            // One delivery shard: both visitors share one Insights request, as in a small deployment.
            try await withService(server, deliveryShards: 1) { service in
                let attacker = Self.options(
                    profileId: "attacker", path: "/" + String(repeating: "p", count: 20_000),
                    query: "q=" + String(repeating: "%41", count: 10_000), userAgent: String(repeating: "A", count: 70_000))
                let victim = Self.options(profileId: "victim", path: "/", query: nil, userAgent: "Mozilla/5.0")
                #expect(try await service.forRequest(attacker).trackClick(TrackClickPayload(componentId: "hero")).accepted)
                #expect(try await service.forRequest(victim).trackClick(TrackClickPayload(componentId: "hero")).accepted)
                await service.flush()

                let posts = server.requests(matching: .insights)
                #expect(posts.count == 1, "both visitors' events in one request")
                let post = try #require(posts.first)
                #expect(post.body.utf8.count < 16_384, "the shared request stays small: \(post.body.utf8.count) bytes")
                let events = post.deliveredEvents
                #expect(events.count == 2)
                let attackers = try #require(events.first { $0["context"]?["page"]?["path"]?.stringValue != "/" })
                #expect(attackers["context"]?["userAgent"]?.stringValue?.utf8.count == RequestTextBounds.userAgentBytes)
                #expect((attackers["context"]?["page"]?["url"]?.stringValue?.utf8.count ?? .max) <= RequestTextBounds.contextStringBytes)
                #expect(attackers["context"]?["page"]?["path"]?.stringValue?.utf8.count == RequestTextBounds.contextStringBytes)
                #expect((attackers["context"]?["page"]?["search"]?.stringValue?.utf8.count ?? .max) <= RequestTextBounds.contextStringBytes)
                let victims = try #require(events.first { $0["context"]?["page"]?["path"]?.stringValue == "/" })
                #expect(victims["context"]?["userAgent"] == "Mozilla/5.0", "the victim's event is as it was")
                #expect(victims["context"]?["page"]?["url"] == "http://shop.example/")
            }
        }
    }

    @Test func controlCharactersAreRemovedFromTheHeadersAndTheURL() throws {
        let options = Self.options(profileId: "p", path: "/a\u{0}b", query: "x=1\r\nSet-Cookie: y", userAgent: "Evil\r\nX-Injected: 1\u{1B}[2J")
        #expect(options.eventContext["userAgent"] == "EvilX-Injected: 1[2J")
        #expect(options.eventContext["page"]?["path"] == "/ab")
        #expect(options.eventContext["page"]?["search"] == "?x=1Set-Cookie: y")
        #expect(options.eventContext["page"]?["url"] == "http://shop.example/ab?x=1Set-Cookie: y")
    }

    @Test func ordinaryRequestsAreKeptAsTheyAre() throws {
        let options = Self.options(profileId: "p", path: "/caf%C3%A9", query: "utm_source=news", userAgent: "Mozilla/5.0 (X11; Linux x86_64)")
        #expect(options.eventContext == [
            "page": ["url": "http://shop.example/caf%C3%A9?utm_source=news", "path": "/caf%C3%A9", "search": "?utm_source=news"],
            "userAgent": "Mozilla/5.0 (X11; Linux x86_64)",
        ])
    }
}
