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

/// The repository's fixtures (Fixtures/ at the root, four folders up from this file).
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")
    /// The optimized hero entry: baseline 3kPf…, 5pNs… for the local server's new visitor,
    /// 2xWc… for its identified visitor.
    static let hero = try! ContentfulEntry(jsonData: Array(try! Data(contentsOf: directory.appendingPathComponent("entries/hero-optimized.json"))))
    static let heroBaseline = "3kPfV7sQy1ZcN0aRbW4xLm"
    static let heroForNewVisitor = "5pNs7JcXq2LmRb9VtKw1Hz"
    static let heroForIdentified = "2xWcL5nRg8HtVq0JpZs4Ke"
}

/// Visitor state as the test app seals it.
enum TestState {
    static let keys = try! VisitorStateKeys(base64Encoded: ["dGVzdC1rZXktb2YtdGhlLWh1bW1pbmdiaXJkLXRlc3Rz"])
    static let cookieName = VisitorCookies.defaultName

    /// A codec with the app's key on `clock`.
    static func codec(_ clock: any HostClock) -> VisitorStateCodec {
        VisitorStateCodec(keys: keys, lifetime: .seconds(VisitorCookies.maxAge), clock: clock)
    }

    /// A codec with a key the app does not hold (an attacker's).
    static let foreignCodec = VisitorStateCodec(keys: VisitorStateKeys.random(), lifetime: .seconds(3600))

    /// A sealed text whose payload is replaced by `json` (base64url), keeping the original MAC.
    static func withPayload(_ sealed: String, _ json: String) -> String {
        let parts = sealed.split(separator: ".")
        let payload = Data(json.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "\(parts[0]).\(payload).\(parts[2])"
    }
}

/// What a test app's tests see: its service, clock, cookies, replay tickets and webhook record.
struct TestApp: Sendable {
    let service: OptimizationService
    let clock: ManualClock
    let cookies: VisitorCookies
    let tickets: OptimizationReplayTickets
    /// Ids the webhook route invalidated.
    let invalidated: Recorder<String>

    /// A `Cookie` header value carrying `state` sealed with the app's key.
    func cookie(_ state: VisitorState) -> String {
        "\(cookies.name)=\(cookies.codec.seal(state))"
    }

    /// The state of the cookie `response` set, or nil when it set none (or it does not open).
    func setState(_ response: TestResponse) -> VisitorState? {
        guard let value = setCookieValue(response) else { return nil }
        return cookies.codec.open(value)
    }

    /// The value of the state cookie `response` set, or nil.
    func setCookieValue(_ response: TestResponse) -> String? {
        for header in response.headers[values: .setCookie] {
            let pair = header.split(separator: ";", maxSplits: 1)[0].split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0] == cookies.name { return String(pair[1]) }
        }
        return nil
    }
}

/// Values recorded from any task.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// A started local API server (Experience and Insights APIs on loopback), always stopped.
func withLocalAPIServer<T>(_ body: (LocalOptimizationAPIServer) async throws -> T) async throws -> T {
    let server = LocalOptimizationAPIServer()
    try await server.start()
    do {
        let result = try await body(server)
        try await server.stop()
        return result
    } catch {
        try? await server.stop()
        throw error
    }
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
    let clock = ManualClock(start: Date().timeIntervalSince1970 * 1000)
    let service = OptimizationService(
        config: OptimizationConfig(
            clientId: "hummingbird-tests", allowedEventTypes: allowedEventTypes,
            api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)),
        options: .init(engines: 1, experienceTimeout: .seconds(600)),  // a hang bound only, on a clock that does not move
        environment: .init(clock: clock))
    let app = TestApp(
        service: service, clock: clock, cookies: VisitorCookies(codec: TestState.codec(clock), secure: secureCookies),
        tickets: OptimizationReplayTickets(keys: TestState.keys, lifetime: .seconds(600), clock: clock), invalidated: Recorder())

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
        return app.tickets.issue(replay, profileId: context.optimization.responseVisitorState.profileId) ?? "no ticket"
    }
    router.get("/state") { _, context -> String in
        context.optimization.visitorState.profileId ?? "new"
    }
    router.addConsentRoute()
    router.addReplayRoute(tickets: app.tickets)
    router.addContentfulWebhookRoute(authentication: webhook, clock: clock) { id in app.invalidated.append(id) }
    if !ofrep.isEmpty {
        router.addOFREPRoutes(try OFREPEvaluator(service: service, configuration: OFREPConfiguration(credentials: ofrep)))
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

/// Runs `body`, failing after 10 minutes: a hang detector only (everything here takes well
/// under a second), never a wait for a timer.
func withHangBound<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(600))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw HangError() }
        return value
    }
}

struct HangError: Error, CustomStringConvertible {
    var description: String { "hang: no answer within 10 minutes" }
}

extension TestClientProtocol {
    /// Sends one request; `cookie` is a `Cookie` header value; `form` and `json` set the content
    /// type, `body` none.
    func send(
        _ method: HTTPRequest.Method, _ uri: String, cookie: String? = nil, headers: [(String, String)] = [],
        form: String? = nil, json: String? = nil, body: String? = nil
    ) async throws -> TestResponse {
        var fields = HTTPFields()
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
