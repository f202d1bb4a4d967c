import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JavaScriptHost
import Logging
import Optimization
import OptimizationHummingbird
import OptimizationTesting
import Synchronization
import Testing

/// The repository's fixtures, as the test kit loads them.
typealias Fixtures = WebIntegrationFixtures

/// Visitor state as the test app seals it, and as an attacker forges it.
enum TestState {
    static let keys = WebIntegrationFixtures.keys

    /// A codec with a key the app does not hold (an attacker's).
    static let foreignCodec = VisitorStateForgery.foreignCodec
}

/// What a test app's tests see: its service, clock, cookies, replay tickets and webhook record.
typealias TestApp = WebIntegrationTestKit

extension WebIntegrationTestKit {
    /// The state of the cookie `response` set, or nil when it set none (or it does not open).
    func setState(_ response: TestResponse) -> VisitorState? {
        cookies.state(inSetCookieHeaders: response.headers[values: .setCookie])
    }

    /// The value of the state cookie `response` set, or nil.
    func setCookieValue(_ response: TestResponse) -> String? {
        cookies.sealedValue(inSetCookieHeaders: response.headers[values: .setCookie])
    }
}

/// A started local API server (Experience and Insights APIs on loopback), always stopped.
func withLocalAPIServer<T>(_ body: (LocalOptimizationAPIServer) async throws -> T) async throws -> T {
    try await LocalOptimizationAPIServer.withRunning(body)
}

/// The test application: `OptimizationMiddleware`, the consent, replay and webhook routes of the
/// integration, `OptimizationService` run by the application (`addOptimizationService`), and
/// three pages:
///
/// - `GET /`: one `page()` call, the hero resolved (its entry id is the body), one `trackView` of
///   it when the request has a profile id.
/// - `GET /first`: a handoff page: `prepareRequestHandoff`, and the body is the replay ticket,
///   bound to the profile id the response stores.
/// - `GET /state`: nothing but the middleware (the body is `new` or the profile id).
///
/// Runs `test` with HummingbirdTesting's router client, then shuts the application down
/// gracefully and runs `afterShutdown` (before anything else could flush the service).
func withTestApp<T: Sendable>(
    _ server: LocalOptimizationAPIServer,
    allowedEventTypes: [String]? = nil,
    secureCookies: Bool = true,
    webhook: ContentfulWebhookAuthentication? = nil,
    ofrep: [OFREPConfiguration.Credential] = [],
    _ test: @escaping @Sendable (any TestClientProtocol, TestApp) async throws -> T,
    afterShutdown: (TestApp) async throws -> Void = { _ in }
) async throws -> T {
    let app = TestApp(server: server, clientId: "hummingbird-tests", allowedEventTypes: allowedEventTypes, secureCookies: secureCookies)
    let service = app.service

    let router = Router(context: BasicOptimizationRequestContext.self)
    router.add(middleware: OptimizationMiddleware(service: service, cookies: app.cookies))
    router.get("/") { _, context -> String in
        let optimization = try context.optimization.request
        _ = try await optimization.page()
        let hero = optimization.resolveOptimizedEntry(baseline: Fixtures.hero)
        if optimization.profileId != nil {
            _ = try await optimization.trackView(TrackViewPayload(
                componentId: Fixtures.heroBaseline, viewId: UUID().uuidString.lowercased(),
                experienceId: hero.selectedOptimization?["experienceId"]?.stringValue,
                optimizationContextId: hero.optimizationContextId,
                variantIndex: hero.selectedOptimization?["variantIndex"]?.intValue ?? 0, viewDuration: .zero))
        }
        return hero.entryId ?? "none"
    }
    router.get("/first") { request, context -> String in
        let optimization = try context.optimization.request
        let handoff = try await optimization.prepareRequestHandoff(routeKey: request.uri.path).handoff
        guard let replay = handoff.replay else { return "no replay" }
        return app.tickets.issue(replay, for: context.optimization) ?? "no ticket"
    }
    router.get("/state") { _, context -> String in
        context.optimization.visitorState.profileId ?? "new"
    }
    router.addConsentRoute()
    router.addReplayRoute(tickets: app.tickets)
    router.addContentfulWebhookRoute(authentication: webhook, clock: app.clock) { id in app.invalidated.append(id) }
    if !ofrep.isEmpty {
        router.addOFREPRoutes(try OFREPEvaluator(service: service, configuration: OFREPConfiguration(credentials: ofrep, targetingKeys: .profileIds)))
    }

    var application = Application(router: router, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    application.addOptimizationService(service)
    let configured = application
    do {
        let result = try await withHangBound { try await configured.test(.router) { client in try await test(client, app) } }
        try await afterShutdown(app)
        await service.shutdown()
        return result
    } catch {
        await service.shutdown()
        throw error
    }
}

extension TestClientProtocol {
    /// Sends one request; `cookie` is a `Cookie` header value; `form` and `json` set the content
    /// type, `body` none.
    /// Sends a request as a browser on the same site would: a `POST` without `Sec-Fetch-Site`,
    /// `Origin` or `Referer` in `headers` gets `Sec-Fetch-Site: same-origin`, unless `asBrowser`
    /// is false (a curl-style client, which sends none of them).
    func send(
        _ method: HTTPRequest.Method, _ uri: String, cookie: String? = nil, headers: [(String, String)] = [],
        form: String? = nil, json: String? = nil, body: String? = nil, asBrowser: Bool = true
    ) async throws -> TestResponse {
        var fields = HTTPFields()
        let siteHeaders: Set<String> = ["sec-fetch-site", "origin", "referer"]
        if asBrowser, method == .post, !headers.contains(where: { siteHeaders.contains($0.0.lowercased()) }) {
            fields.append(HTTPField(name: HTTPField.Name("Sec-Fetch-Site")!, value: "same-origin"))
        }
        if let cookie { fields[.cookie] = cookie }
        if form != nil { fields[.contentType] = "application/x-www-form-urlencoded" }
        if json != nil { fields[.contentType] = "application/json" }
        for (name, value) in headers { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        let bytes = (form ?? json ?? body).map { ByteBuffer(string: $0) }
        return try await executeRequest(uri: uri, method: method, headers: fields, body: bytes)
    }
}

extension TestResponse {
    /// The body as text.
    var text: String { String(buffer: body) }
}
