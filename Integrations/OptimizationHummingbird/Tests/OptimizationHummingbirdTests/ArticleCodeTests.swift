import Foundation
import Hummingbird
import HummingbirdTesting
import JavaScriptHost
import Logging
import Optimization
import OptimizationHummingbird
import OptimizationTesting
import Testing

// The code of the DocC article "From the Package.swift line to a personalized page"
// (OptimizationHummingbird.docc/PersonalizedPageFromPackageSwift.md), kept identical to it.

/// The service's HTTP application: the visitor-state middleware, `POST /consent`, and `GET /`
/// rendering `hero` in the visitor's variant.
func makeApplication(
    service: OptimizationService, keys: VisitorStateKeys, hero: ContentfulEntry,
    port: Int, secureCookies: Bool, logger: Logger
) -> some ApplicationProtocol {
    let cookies = VisitorCookies(
        codec: VisitorStateCodec(keys: keys, lifetime: .seconds(VisitorCookies.maxAge)),
        secure: secureCookies)
    let router = Router(context: BasicOptimizationRequestContext.self)
    router.add(middleware: OptimizationMiddleware(service: service, cookies: cookies))
    router.addConsentRoute()
    router.get("/") { _, context -> String in
        let optimization = try context.optimization.request
        // One Experience API call: the visitor's page view (before consent only the
        // allow-listed `page` event leaves, marked unconsented).
        _ = try await optimization.page()
        let resolved = optimization.resolveOptimizedEntry(baseline: hero)
        return "showing \(resolved.entryId ?? hero.id)\n"
    }
    var application = Application(
        router: router,
        configuration: .init(address: .hostname("127.0.0.1", port: port)),
        logger: logger)
    // The engines start before the server listens; SIGTERM stops the server, then flushes.
    application.addOptimizationService(service)
    return application
}

/// The article's `@main` type (compiled, not run: it would listen on port 8080 until SIGTERM).
struct ArticleApp {
    static func main() async throws {
        let logger = Logger(label: "app")
        let service = OptimizationService(
            config: OptimizationConfig(clientId: "<your client id>"),
            environment: .init(logger: logger))
        let keys = try VisitorStateKeys(base64Encoded: ["<base64 of 32 random bytes>"])
        // The baseline entry as the Content Delivery API returns it (`include` 10).
        let hero = try ContentfulEntry(jsonData: Array(try Data(contentsOf: URL(fileURLWithPath: "hero.json"))))
        let application = makeApplication(
            service: service, keys: keys, hero: hero, port: 8080, secureCookies: true, logger: logger)
        try await application.runService()  // until SIGTERM or SIGINT
    }
}

@Suite struct ArticleCodeTests {
    /// The article's application against the test kit's API server: the visitor's walk of the
    /// article's "What a visitor sees".
    @Test func theArticlesApplicationPersonalizesAfterConsent() async throws {
        try await withLocalAPIServer { server in
            let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
            let service = OptimizationService(
                config: OptimizationConfig(
                    clientId: "article", api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)),
                environment: .init(logger: logger, clock: ManualClock()))
            let application = makeApplication(
                service: service, keys: TestState.keys, hero: Fixtures.hero, port: 0, secureCookies: false, logger: logger)
            let codec = VisitorStateCodec(keys: TestState.keys, lifetime: .seconds(VisitorCookies.maxAge))
            try await withHangBound {
                try await application.test(.router) { client in
                    let first = try await client.send(.get, "/")
                    #expect(first.text == "showing \(Fixtures.heroForNewVisitor)\n")
                    #expect(first.headers[values: .setCookie].isEmpty)
                    let consent = try await client.send(.post, "/consent", form: "consent=accept")
                    #expect(consent.status == .seeOther)
                    let cookie = try #require(consent.headers[values: .setCookie].first?.split(separator: ";").first.map(String.init))
                    let next = try await client.send(.get, "/", cookie: cookie)
                    #expect(next.text == "showing \(Fixtures.heroForNewVisitor)\n")
                    let stored = try #require(next.headers[values: .setCookie].first?.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last)
                    #expect(codec.open(String(stored))?.profileId != nil, "the profile id is stored after consent")
                    #expect(!(next.headers[values: .setCookie].first ?? "").lowercased().contains("secure"))
                }
            }
            #expect(!service.isRunning, "the application shut the service down")
        }
    }
}
