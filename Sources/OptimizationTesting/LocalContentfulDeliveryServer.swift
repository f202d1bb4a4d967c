import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A local Contentful Content Delivery API for tests: a SwiftNIO HTTP/1.1 server on `127.0.0.1`
/// and an ephemeral port that serves the entries of a ``LocalContentfulSpace``, records every
/// request and can be scripted, per request, to fail as the real API and networks do.
///
/// ```swift
/// let server = LocalContentfulDeliveryServer()
/// try server.space.load(directory: entriesDirectory)     // CDA collection files or entries
/// try await server.start()
/// server.enqueue(.contentfulRateLimit(resetSeconds: 2))   // the next request gets a 429
/// // configure the CDA base URL as server.baseURL, the token as server.space.accessToken …
/// try await server.stop()
/// ```
///
/// **Contract (``ScriptedResponse/standard``).** `GET /spaces/{space}/environments/{env}/entries`
/// (and `/spaces/{space}/entries` for `master`) with `Authorization: Bearer <token>` (or
/// `access_token=`): 401 `AccessTokenInvalid` for a wrong or missing token, 404 `NotFound` for
/// another space or environment, 400 `InvalidQuery` for a bad `include` (0…10), `limit` (0…1000),
/// `skip`, unknown `locale`, or a `fields.` filter without `content_type`. Otherwise 200 with the
/// collection `{sys:{type:"Array"}, total, skip, limit, items, includes:{Entry, Asset}, errors}`:
/// filters `sys.id`, `sys.id[in]` (comma-separated), `content_type`, `fields.<name>` (equality);
/// items sorted by `sys.id` (callers must not rely on the order asked); linked entries and assets
/// `include` levels deep in `includes` (never repeating an item); missing link targets listed in
/// `errors` as `notResolvable`. Error bodies are the CDA's `{sys:{type:"Error",id}, message,
/// requestId}`.
///
/// **Scripts, recording, threading, lifecycle** work as for ``LocalOptimizationAPIServer``:
/// ``enqueue(_:for:)`` scripts the next matching requests (``ScriptedResponse/delay(_:then:)``,
/// ``ScriptedResponse/dropConnection``, ``ScriptedResponse/status(_:body:headers:)``,
/// ``ScriptedResponse/contentfulRateLimit(resetSeconds:)``); waits are woken by the server
/// (their timeout is a failure bound only); every member is safe from any thread.
public final class LocalContentfulDeliveryServer: Sendable {
    /// The entries served; change them at any time.
    public let space: LocalContentfulSpace
    private let state: LocalAPIServerState
    private let listener: LoopbackHTTPListener

    /// Creates a stopped server; ``start()`` binds it.
    /// - Parameters:
    ///   - space: the content to serve; by default a new, empty ``LocalContentfulSpace`` with
    ///     its default space id, environment and token.
    ///   - logger: receives the server's diagnostics; discards everything by default.
    public init(
        space: LocalContentfulSpace = LocalContentfulSpace(),
        logger: Logger = Logger(label: "OptimizationTesting.LocalContentfulDeliveryServer", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.space = space
        let state = LocalAPIServerState(responder: { space.response(to: $0) })
        self.state = state
        listener = LoopbackHTTPListener(state: state, name: "local CDA server", logger: logger)
    }

    // MARK: Lifecycle

    /// Binds `127.0.0.1` on an ephemeral port and starts answering.
    /// - Throws: ``LocalAPIServerError/alreadyStarted``, or the bind error.
    public func start() async throws {
        try await listener.start()
    }

    /// Closes the listening socket and every open connection. Does nothing when not running.
    public func stop() async throws {
        try await listener.stop()
    }

    /// The bound port; 0 when not running.
    public var port: Int { listener.port }

    /// `http://127.0.0.1:<port>` (no trailing slash): configure it as the CDA base URL.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    // MARK: Recording and scripting

    /// Every request received, in arrival order.
    public var requests: [RecordedRequest] { state.snapshot.requests }

    /// Entry-collection requests received (`…/entries`), in arrival order.
    public var entryRequests: [RecordedRequest] { requests.filter { $0.path.hasSuffix("/entries") } }

    /// Forgets the recorded requests.
    public func clearRecordedRequests() { state.clearRequests() }

    /// Waits until at least `count` recorded requests match `matcher` and returns them.
    /// - Throws: ``LocalAPIServerError/waitTimedOut(_:)`` after `timeout` (a failure bound).
    @discardableResult
    public func waitForRequests(
        count: Int, matching matcher: RequestMatcher = .any, timeout: Duration = .seconds(10)
    ) async throws -> [RecordedRequest] {
        let snapshot = try await state.wait(timeout: timeout, description: "\(count) CDA request(s) matching \(matcher)") {
            $0.requests.lazy.filter(matcher.matches).count >= count
        }
        return snapshot.requests.filter(matcher.matches)
    }

    /// Appends `responses`, in order, to the script for requests `matcher` selects.
    public func enqueue(_ responses: ScriptedResponse..., for matcher: RequestMatcher = .any) {
        state.enqueue(responses, for: matcher)
    }

    /// Script entries not consumed yet.
    public var pendingScriptedResponseCount: Int { state.pendingScriptCount }
}

extension ScriptedResponse {
    /// The CDA's rate-limit answer: 429 with `X-Contentful-RateLimit-Reset: <resetSeconds>` and
    /// a `RateLimitExceeded` error body.
    public static func contentfulRateLimit(resetSeconds: Int) -> ScriptedResponse {
        .status(
            429,
            body: #"{"sys":{"type":"Error","id":"RateLimitExceeded"},"message":"You have exceeded the rate limit of the Organization this Space belongs to by making too many API requests within a short timespan. Please wait a moment before trying the request again."}"#,
            headers: ["X-Contentful-RateLimit-Reset": "\(resetSeconds)"])
    }

    /// A CDA-shaped server error (`status` 5xx) with an `{sys:{type:"Error",id}, message}` body.
    public static func contentfulServerError(_ status: Int = 500) -> ScriptedResponse {
        .status(status, body: #"{"sys":{"type":"Error","id":"ServerError"},"message":"Internal server error."}"#)
    }
}
