import AsyncHTTPClient
import Foundation
import JavaScriptHost
import Logging
import NIOCore
import Optimization
import OptimizationTesting
import PersonalizedPagesApp
import Prometheus
import Testing

/// A started local API server, always stopped.
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

/// The app running in process (service + HTTP server in one ServiceGroup) on an ephemeral port
/// against `server`, signing visitor state with ``TestVisitorState/key``; graceful shutdown
/// (which flushes) when `body` returns or throws.
/// - Parameters:
///   - clock: the app's clock (visitor-state and replay-ticket expiry, the service's timers);
///     default a `ManualClock` at the current time, which moves only when a test advances it:
///     nothing is sent on a flush interval, a test flushes or shuts down.
///   - configure: changes to the test configuration.
func withApp<T>(
    _ server: LocalOptimizationAPIServer, clock: any HostClock = ManualClock(start: Date().timeIntervalSince1970 * 1000), configure: (inout AppConfiguration) -> Void = { _ in },
    _ body: (_ baseURL: String, _ app: PersonalizedPagesApp) async throws -> T
) async throws -> T {
    try await withApp(server, metricsRegistry: nil, clock: clock, configure: configure) { listeners, app in try await body(listeners.baseURL, app) }
}

/// Where the in-process app listens.
struct AppListeners: Sendable {
    /// The public listener.
    var baseURL: String
    /// The metrics listener; nil when the app runs without a metrics registry.
    var metricsURL: String?
}

/// As `withApp(_:clock:configure:_:)`; with `metricsRegistry` the service records into it and the
/// metrics listener serves it on another ephemeral port; `telemetry` runs in the app's group.
func withApp<T>(
    _ server: LocalOptimizationAPIServer, metricsRegistry: PrometheusCollectorRegistry?, telemetry: AppTelemetry? = nil,
    clock: any HostClock = ManualClock(start: Date().timeIntervalSince1970 * 1000), configure: (inout AppConfiguration) -> Void = { _ in },
    _ body: (_ listeners: AppListeners, _ app: PersonalizedPagesApp) async throws -> T
) async throws -> T {
    var configuration = AppConfiguration(
        port: 0, metricsPort: metricsRegistry == nil ? nil : 0, clientId: "personalized-pages-tests",
        experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL,
        engines: 1, experienceTimeout: .milliseconds(60_000),  // on the manual clock it never runs out; .hangBound bounds a hang
        visitorStateKeys: [TestVisitorState.key])
    configure(&configuration)
    let app = try PersonalizedPagesApp(
        configuration: configuration, metricsRegistry: metricsRegistry, telemetry: telemetry, clock: clock,
        logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let (metricsPorts, metricsContinuation) = AsyncStream<Int>.makeStream()
    let group = try await app.makeServiceGroup(
        gracefulShutdownSignals: [], onListening: { continuation.yield($0) }, onMetricsListening: { metricsContinuation.yield($0) })
    let running = Task {
        defer {
            continuation.finish()
            metricsContinuation.finish()
        }
        try await group.run()
    }
    var iterator = ports.makeAsyncIterator()
    var metricsIterator = metricsPorts.makeAsyncIterator()
    guard let port = await iterator.next() else {
        try await running.value
        throw HarnessError("the app stopped before it was listening")
    }
    var listeners = AppListeners(baseURL: "http://127.0.0.1:\(port)")
    if metricsRegistry != nil {
        guard let metricsPort = await metricsIterator.next() else {
            try await running.value
            throw HarnessError("the app stopped before its metrics listener was listening")
        }
        listeners.metricsURL = "http://127.0.0.1:\(metricsPort)"
    }
    do {
        let result = try await body(listeners, app)
        await group.triggerGracefulShutdown()
        try await running.value
        return result
    } catch {
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        throw error
    }
}

/// Visitor-state cookies as the test apps seal them: the tests' key (32 bytes, base64) and the
/// app's lifetime (a shorter one would make the app renew every cookie the tests send).
enum TestVisitorState {
    static let key = "dGVzdC1rZXktb2YtcGVyc29uYWxpemVkLXBhZ2VzLTEy"
    static let codec = VisitorStateCodec(keys: try! VisitorStateKeys(base64Encoded: [key]), lifetime: .seconds(VisitorCookies.maxAge))

    /// A `pp_state` cookie value holding the given state, sealed with ``key``.
    static func cookie(profileId: String? = nil, consent: Bool? = nil, selections: SelectedOptimizations? = nil, codec: VisitorStateCodec = codec) -> String {
        codec.seal(VisitorState(profileId: profileId, consent: consent, selections: selections))
    }

    /// The state in a `pp_state` cookie value, or nil when it does not open with ``key``.
    static func open(_ value: String?) -> VisitorState? {
        value.flatMap(codec.open)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One HTTP answer of the app.
struct PageResponse: Sendable {
    var status: Int
    var body: String
    /// Cookies the response set (name → value; an empty value with Max-Age=0 deletes).
    var setCookies: [String: String]
    var location: String?
    var cacheControl: String?
    /// Every `Set-Cookie` header as sent, attributes included.
    var setCookieHeaders: [String] = []

    /// `data-baseline` → `data-entry` of every rendered section.
    var renderedEntries: [String: String] {
        var result: [String: String] = [:]
        for match in body.matches(of: /data-baseline="([^"]*)" data-entry="([^"]*)"/) {
            result[String(match.1)] = String(match.2)
        }
        return result
    }
}

/// A visitor: a browser that keeps the cookies the app sets. Real HTTP (AsyncHTTPClient), no
/// redirects followed, 60 s hang bound per request.
struct Visitor {
    let baseURL: String
    let client: HTTPClient
    var cookies: [String: String] = [:]

    mutating func get(_ path: String, headers: [(String, String)] = []) async throws -> PageResponse {
        try await send("GET", path, body: nil, headers: headers)
    }

    /// Posts a form as the visitor's browser does: with `Origin` (its page's) unless `headers`
    /// name a site or `asBrowser` is false (a script that sends none).
    mutating func post(_ path: String, form: String, headers: [(String, String)] = [], asBrowser: Bool = true) async throws -> PageResponse {
        try await send("POST", path, body: form, headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers, asBrowser: asBrowser)
    }

    /// Posts JSON as the visitor's page does (with `Origin` unless `asBrowser` is false).
    mutating func post(_ path: String, json: String, headers: [(String, String)] = [], asBrowser: Bool = true) async throws -> PageResponse {
        try await send("POST", path, body: json, headers: [("Content-Type", "application/json")] + headers, asBrowser: asBrowser)
    }

    private mutating func send(_ method: String, _ path: String, body: String?, headers: [(String, String)], asBrowser: Bool = true) async throws -> PageResponse {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .init(rawValue: method)
        request.headers.add(name: "User-Agent", value: "personalized-pages-tests")
        // A browser's form or fetch POST carries its page's origin (the app refuses a state
        // change that names no site).
        let siteHeaders: Set<String> = ["sec-fetch-site", "origin", "referer"]
        if asBrowser, method == "POST", !headers.contains(where: { siteHeaders.contains($0.0.lowercased()) }) {
            request.headers.add(name: "Origin", value: baseURL)
        }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if !cookies.isEmpty {
            request.headers.add(name: "Cookie", value: cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
        }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        var set: [String: String] = [:]
        for header in response.headers["set-cookie"] {
            let pair = header.split(separator: ";", maxSplits: 1)[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0]).trimmingCharacters(in: .whitespaces)
            let value = pair.count > 1 ? String(pair[1]) : ""
            set[name] = value
            if value.isEmpty || header.lowercased().contains("max-age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        return PageResponse(
            status: Int(response.status.code), body: String(buffer: bytes), setCookies: set,
            location: response.headers.first(name: "location"), cacheControl: response.headers.first(name: "cache-control"),
            setCookieHeaders: response.headers["set-cookie"])
    }
}

/// An HTTP client that follows no redirects, always shut down.
func withHTTPClient<T>(_ body: (HTTPClient) async throws -> T) async throws -> T {
    var configuration = HTTPClient.Configuration()
    configuration.redirectConfiguration = .disallow
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    do {
        let result = try await body(client)
        try await client.shutdown()
        return result
    } catch {
        try? await client.shutdown()
        throw error
    }
}

/// Ids of the fixture entries the page shows (Fixtures/entries/).
enum PageIDs {
    static let hero = "3kPfV7sQy1ZcN0aRbW4xLm"
    static let heroPersonalized = "2xWcL5nRg8HtVq0JpZs4Ke"  // experience 6TgHn2JdQw8rYv5XkLc0Bs, variant 1
    static let promo = "promoStripBaseline"
    static let promoVariant = "promoStripVariant"  // experience expStripResolved, variant 1
    static let article = "articleTrailBaseline"
    static let articleVariant = "articleTrailVariant"  // experience expArticleIntro, variant 1
}

/// Waits, polling, until `condition` holds: for real I/O the test cannot await (a request the
/// app sends in the background). Fails after the hang bound (60 s of wall-clock time).
func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while !condition() {
        guard ContinuousClock.now < deadline else { throw HarnessError("condition not met within 60 s") }
        try await Task.sleep(for: .milliseconds(5))
    }
}

extension Trait where Self == TimeLimitTrait {
    /// Every suite's time limit: 10 minutes, longer than the whole example suite takes on a busy
    /// 2-core machine, so it is only ever reached by a hang (the app's clock is a `ManualClock`,
    /// on which the Experience call's budget never runs out).
    static var hangBound: Self { .timeLimit(.minutes(10)) }
}
