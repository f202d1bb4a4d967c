import Foundation
import JavaScriptHost
import Optimization
import OptimizationTesting
import OptimizationVapor
import Testing
import Vapor
import VaporTesting

// The code of the DocC article "From the Package.swift line to a personalized page"
// (OptimizationVapor.docc/PersonalizedPageFromPackageSwift.md), kept identical to it.

/// Configures `app`: Optimization once (the service starts when the application boots and
/// flushes when it shuts down), the visitor-state middleware, `POST /consent`, and `GET /`
/// rendering `hero` in the visitor's variant.
func configure(_ app: Application, service: OptimizationService, keys: VisitorStateKeys, hero: ContentfulEntry, secureCookies: Bool) throws {
    try app.optimization.configure(
        service: service,
        cookies: VisitorCookies(
            codec: VisitorStateCodec(keys: keys, lifetime: .seconds(VisitorCookies.maxAge)),
            secure: secureCookies))
    let visitors = app.grouped(OptimizationMiddleware())
    visitors.addConsentRoute()
    visitors.get { req async throws -> String in
        // One Experience API call: the visitor's page view (before consent only the
        // allow-listed `page` event leaves, marked unconsented).
        try await req.optimization.page()
        let shown = try req.optimization.resolveOptimizedEntry(baseline: hero)
        return "showing \(shown.entryId ?? hero.id)\n"
    }
}

/// The article's entry point (compiled, not run: it would serve on port 8080 until SIGTERM).
enum ArticleEntrypoint {
    static func main() async throws {
        var environment = try Environment.detect()
        try LoggingSystem.bootstrap(from: &environment)
        let app = try await Application.make(environment)
        let service = OptimizationService(
            config: OptimizationConfig(clientId: "<your client id>"),
            environment: .init(logger: app.logger))
        do {
            let keys = try VisitorStateKeys(base64Encoded: ["<base64 of 32 random bytes>"])
            // The baseline entry as the Content Delivery API returns it (`include` 10).
            let hero = try ContentfulEntry(jsonData: Array(try Data(contentsOf: URL(fileURLWithPath: "hero.json"))))
            try configure(app, service: service, keys: keys, hero: hero, secureCookies: true)
            try await app.execute()  // boots (the engines start), then serves until SIGTERM or SIGINT
        } catch {
            app.logger.report(error: error)
        }
        try await app.asyncShutdown()  // flushes the queued events, then stops the engines
    }
}

@Suite struct ArticleCodeTests {
    /// The article's configuration against the test kit's API server: the visitor's walk of the
    /// article's "What a visitor sees".
    @Test func theArticlesApplicationPersonalizesAndRemembersAfterConsent() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let service = server.makeService(clientId: "vapor-article", clock: ManualClock())
            try await withApp(configure: { app in
                try configure(app, service: service, keys: WebIntegrationFixtures.keys, hero: WebIntegrationFixtures.hero, secureCookies: false)
                try await app.asyncBoot()
            }) { app in
                let tester = try app.testing()
                let first = try await tester.sendRequest(.GET, "/")
                #expect(first.body.string == "showing \(WebIntegrationFixtures.heroForNewVisitor)\n")
                #expect(first.headers[.setCookie].isEmpty)
                let consent = try await tester.sendRequest(.POST, "/consent", headers: ["Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"], body: ByteBuffer(string: "consent=accept"))
                #expect(consent.status == .seeOther)
                let cookie = try #require(consent.headers[.setCookie].first?.split(separator: ";").first.map(String.init))
                let next = try await tester.sendRequest(.GET, "/", headers: ["Cookie": cookie])
                #expect(next.body.string == "showing \(WebIntegrationFixtures.heroForNewVisitor)\n")
                let stored = try #require(next.headers[.setCookie].first)
                #expect(stored.contains("HttpOnly") && !stored.contains("Secure"))
                #expect(server.requests(matching: .experience).last?.json?["events"]?[0]?["context"]?["gdpr"]?["isConsentGiven"] == true)
            }
            #expect(!service.isRunning, "the application's shutdown stopped the service")
        }
    }
}
