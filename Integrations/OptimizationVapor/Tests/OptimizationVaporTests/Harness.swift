import Foundation
import JavaScriptHost
import Optimization
import OptimizationTesting
import OptimizationVapor
import Testing
import VaporTesting

/// What a Vapor test sees: the booted application (its in-memory tester), and the test kit it
/// was configured with (`harness.service`, `.clock`, `.cookies`, `.tickets`, `.invalidated`).
@dynamicMemberLookup
struct VaporHarness: Sendable {
    let app: Application
    let kit: WebIntegrationTestKit

    subscript<Value>(dynamicMember member: KeyPath<WebIntegrationTestKit, Value>) -> Value { kit[keyPath: member] }

    /// A `Cookie` value for `state`, sealed with the app's key.
    func cookie(_ state: VisitorState) -> String { kit.cookie(state) }

    /// The `Cookie` value that sends back what `response` set, or nil when it set nothing.
    func returnedCookie(_ response: TestingHTTPResponse) -> String? {
        kit.cookies.sealedValue(inSetCookieHeaders: response.headers[.setCookie]).map { "\(kit.cookies.name)=\($0)" }
    }

    /// The state `response` stored, or nil when it set no cookie (or one that does not open).
    func storedState(_ response: TestingHTTPResponse) -> VisitorState? {
        kit.cookies.state(inSetCookieHeaders: response.headers[.setCookie])
    }

    /// Sends one request to the application in memory, for the host `localhost`. `cookie` is a
    /// `Cookie` value; `form` is sent as a URL-encoded form, `json` as JSON, `raw` as it is.
    /// Sends a request as a browser on the same site would: a `POST` without `Sec-Fetch-Site`,
    /// `Origin` or `Referer` in `extra` gets `Sec-Fetch-Site: same-origin`, unless `asBrowser`
    /// is false (a curl-style client, which sends none of them).
    func send(
        _ method: HTTPMethod, _ path: String, cookie: String? = nil, headers extra: [(String, String)] = [],
        form: String? = nil, json: String? = nil, raw: String? = nil, asBrowser: Bool = true
    ) async throws -> TestingHTTPResponse {
        var headers: HTTPHeaders = ["Host": "localhost"]
        let siteHeaders: Set<String> = ["sec-fetch-site", "origin", "referer"]
        if asBrowser, method == .POST, !extra.contains(where: { siteHeaders.contains($0.0.lowercased()) }) {
            headers.add(name: "Sec-Fetch-Site", value: "same-origin")
        }
        cookie.map { headers.add(name: .cookie, value: $0) }
        if form != nil { headers.contentType = .urlEncodedForm }
        if json != nil { headers.contentType = .json }
        extra.forEach { headers.add(name: $0.0, value: $0.1) }
        let payload = form ?? json ?? raw
        return try await app.testing().sendRequest(method, path, headers: headers, body: payload.map { ByteBuffer(string: $0) })
    }
}

/// The settings a test changes.
struct HarnessOptions: Sendable {
    var allowedEventTypes: [String]? = nil
    var secureCookies = true
    var webhook: ContentfulWebhookAuthentication? = nil
    var ofrep: [OFREPConfiguration.Credential] = []
}

/// Builds the test application on a fresh `Application(.testing)`, the way an app's
/// `configure(_:)` does, boots it (starting the service through its lifecycle handler), runs
/// `test`, shuts it down with `asyncShutdown()` (flushing the service), then runs `afterShutdown`.
///
/// Its pages: `GET /` (one `page()`, the hero resolved, its entry id the body, a `trackView` when
/// the visitor has a profile), `GET /first` (a handoff page whose body is the replay ticket),
/// `GET /state` (the verified profile id, or `new`), and, outside the middleware,
/// `GET /unprepared` (reads `req.optimization`).
func withVaporHarness<T: Sendable>(
    _ server: LocalOptimizationAPIServer, _ options: HarnessOptions = HarnessOptions(),
    _ test: @escaping @Sendable (VaporHarness) async throws -> T,
    afterShutdown: (VaporHarness) async throws -> Void = { _ in }
) async throws -> T {
    let kit = WebIntegrationTestKit(
        server: server, clientId: "vapor-tests", allowedEventTypes: options.allowedEventTypes, secureCookies: options.secureCookies)
    let service = kit.service
    let harness = VaporHarness(app: try await Application.make(.testing), kit: kit)
    let app = harness.app
    do {
        try configureTestRoutes(harness, options)
        try await app.asyncBoot()
        let result = try await withHangBound { try await test(harness) }
        try await app.asyncShutdown()
        try await afterShutdown(harness)
        return result
    } catch {
        if !app.didShutdown { try? await app.asyncShutdown() }
        await service.shutdown()
        throw error
    }
}

/// The test application's configuration and routes.
private func configureTestRoutes(_ harness: VaporHarness, _ options: HarnessOptions) throws {
    let app = harness.app
    try app.optimization.configure(service: harness.service, cookies: harness.cookies)
    app.get("unprepared") { request async throws -> String in
        _ = try request.optimization
        return "prepared"
    }
    app.addContentfulWebhookRoute(authentication: options.webhook, clock: harness.clock) { id in harness.invalidated.append(id) }
    if !options.ofrep.isEmpty {
        app.addOFREPRoutes(try OFREPEvaluator(service: harness.service, configuration: OFREPConfiguration(credentials: options.ofrep, targetingKeys: .profileIds)))
    }
    let visitors = app.grouped(OptimizationMiddleware())
    visitors.addConsentRoute()
    visitors.addReplayRoute(tickets: harness.tickets)
    visitors.get { request async throws -> String in
        let optimization = try request.optimization
        _ = try await optimization.page()
        let hero = optimization.resolveOptimizedEntry(baseline: WebIntegrationFixtures.hero)
        guard optimization.profileId != nil else { return hero.entryId ?? "none" }
        let variant = hero.selectedOptimization
        _ = try await optimization.trackView(TrackViewPayload(
            componentId: WebIntegrationFixtures.heroBaseline, viewId: UUID().uuidString.lowercased(),
            experienceId: variant?["experienceId"]?.stringValue, optimizationContextId: hero.optimizationContextId,
            variantIndex: variant?["variantIndex"]?.intValue ?? 0, viewDuration: .zero))
        return hero.entryId ?? "none"
    }
    visitors.get("first") { request async throws -> String in
        let visitor = try request.optimizationState
        guard let replay = try await visitor.request.prepareRequestHandoff(routeKey: request.url.path).handoff.replay else { return "no replay" }
        return harness.tickets.issue(replay, for: visitor) ?? "no ticket"
    }
    visitors.get("state") { request async throws -> String in
        try request.optimizationState.visitorState.profileId ?? "new"
    }
}

extension TestingHTTPResponse {
    /// The body as text.
    var text: String { String(buffer: body) }
}
