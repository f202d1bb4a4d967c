import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A local Experience and Insights API for tests: a SwiftNIO HTTP/1.1 server on `127.0.0.1` and
/// an ephemeral port that answers like the real APIs (profiles, Insights batches), records every request and can be
/// scripted, per request, to fail in the ways real networks do.
///
/// ```swift
/// let server = LocalOptimizationAPIServer()
/// try await server.start()
/// defer { Task { try await server.stop() } }   // or stop() at the end of the test
/// server.enqueue(.status(500), .retryAfter(seconds: 1), for: .insights)
/// // point the client at server.experienceBaseURL / server.insightsBaseURL …
/// let sent = try await server.waitForRequests(count: 3, matching: .insights)
/// ```
///
/// **Mounts.** `baseURL` is `http://127.0.0.1:<port>` (no trailing slash); the Experience API
/// is under ``experienceBaseURL`` (`<base>/experience/`) and Insights under ``insightsBaseURL``
/// (`<base>/insights/`).
///
/// **Contract (``ScriptedResponse/standard``).** Bodies are read as JSON whatever the
/// `Content-Type` (`text/plain` JSON included). Both API versions are served, with the same
/// answers: API v1 under `{experience}v2/organizations/:org/…` and `{insights}v1/organizations/:org/…`
/// (as written below), API v2 under `{experience}v3/spaces/:space/…` and
/// `{insights}v2/spaces/:space/…`.
/// * `POST {experience}v2/organizations/:org/environments/:env/profiles` with `{events, options}`:
///   `events` must be a non-empty array of objects with a string `type`, else 400
///   `{"error":"Invalid Event Array"}`; otherwise 200 with `{data:{profile, experiences, changes},
///   message:"", error:null}` for a fresh id (`profile.id == profile.stableId`). A profile that
///   ever sent an `identify` event gets the identified-visitor data (other audiences, traits,
///   selections and change; identify traits are merged into `profile.traits`).
/// * `POST …/profiles/:id`: the same, keeping `:id`. `GET …/profiles/:id`: 200 for known ids
///   (``fixtureProfileID`` and every id created or updated), else 404
///   `{"message":"Profile not found","data":{},"error":{"code":"ERR_PROFILE_NOT_FOUND"}}`.
/// * `POST {experience}v2/…/events` (batch; every event needs a string `anonymousId`, else 400
///   `{"error":"Invalid Batch Event Array"}`): 200 `{data:{profiles:[Profile]}, message, error}`.
/// * `POST {insights}v1/organizations/:org/environments/:env/events` with a JSON array of batches:
///   stored (``insightsBatches``), 204; `GET {insights}v1/…/profiles/:id` → `{data:[batches]}`.
/// * `GET */health` → `ok`; `POST */reset-state` forgets profiles; `OPTIONS` → 204; CORS `*`;
///   anything else 404.
///
/// **Scripts.** ``enqueue(_:for:)`` adds ``ScriptedResponse`` entries to one FIFO; each request
/// consumes the first entry whose ``RequestMatcher`` selects it (health checks included), and
/// gets ``ScriptedResponse/standard`` when none does. ``ScriptedResponse/hang`` holds a request
/// unanswered until the client closes its connection; ``connections`` records when each
/// connection opened and closed.
///
/// **Threading.** Every member is safe from any thread or task. Requests are handled on the
/// server's own event-loop thread. Waits (``waitForRequests(count:matching:timeout:)``,
/// ``waitUntil(timeout:description:_:)``) are woken by the server itself (no polling, no sleeps);
/// their timeout is a failure bound only.
///
/// **Lifecycle.** ``start()`` binds, ``stop()`` closes every connection and releases the thread;
/// the server can be started again (on a new port). Recorded requests, scripts and profiles
/// survive a restart.
public final class LocalOptimizationAPIServer: Sendable {
    private let state = LocalAPIServerState()
    private let listener: LoopbackHTTPListener

    /// Creates a stopped server; ``start()`` binds it.
    /// - Parameter logger: receives the server's diagnostics; discards everything by default.
    public init(logger: Logger = Logger(label: "OptimizationTesting.LocalAPIServer", factory: { _ in SwiftLogNoOpLogHandler() })) {
        listener = LoopbackHTTPListener(state: state, name: "local API server", logger: logger)
    }

    // MARK: Lifecycle

    /// Binds `127.0.0.1` on an ephemeral port and starts answering.
    /// - Throws: ``LocalAPIServerError/alreadyStarted``, or the bind error.
    public func start() async throws {
        try await listener.start()
    }

    /// Closes the listening socket and every open connection (pending delayed answers are
    /// dropped). Does nothing when not running.
    public func stop() async throws {
        try await listener.stop()
    }

    /// True between ``start()`` and ``stop()``.
    public var isRunning: Bool { listener.isRunning }

    /// The bound port; 0 when not running.
    public var port: Int { listener.port }

    /// `http://127.0.0.1:<port>` (no trailing slash). Port 0 (refused) when not running.
    public var baseURL: String { "http://127.0.0.1:\(port)" }
    /// `<baseURL>/experience/`: configure it as the Experience API base URL.
    public var experienceBaseURL: String { baseURL + "/experience/" }
    /// `<baseURL>/insights/`: configure it as the Insights API base URL.
    public var insightsBaseURL: String { baseURL + "/insights/" }

    // MARK: Recording

    /// Every request received, in arrival order.
    public var requests: [RecordedRequest] { state.snapshot.requests }

    /// The recorded requests `matcher` selects, in arrival order.
    public func requests(matching matcher: RequestMatcher) -> [RecordedRequest] {
        state.snapshot.requests.filter(matcher.matches)
    }

    /// TCP connections accepted since the server was created (proves connection reuse).
    public var acceptedConnectionCount: Int { state.snapshot.acceptedConnectionCount }

    /// TCP connections open right now.
    public var openConnectionCount: Int { state.snapshot.openConnectionCount }

    /// TCP connections closed (by either side) since the server was created.
    public var closedConnectionCount: Int { state.snapshot.closedConnectionCount }

    /// The most connections open at the same time since the server was created.
    public var peakOpenConnectionCount: Int { state.snapshot.peakOpenConnectionCount }

    /// Every connection accepted since the server was created, with when it opened and closed
    /// (proves that a client really let go of a request it gave up on).
    public var connections: [ServerConnection] { state.snapshot.connections }

    /// A consistent copy of requests and connection counts.
    public var snapshot: LocalAPIServerSnapshot { state.snapshot }

    /// Forgets the recorded requests (connection counts are kept).
    public func clearRecordedRequests() {
        state.clearRequests()
    }

    /// Waits until at least `count` recorded requests match `matcher`, then returns all of those
    /// requests (in arrival order). Woken by the server on every request; returns at once when
    /// already satisfied.
    /// - Parameters:
    ///   - count: how many matching requests to wait for.
    ///   - matcher: which requests count.
    ///   - timeout: a failure bound, not a sleep. The default, ten minutes, only catches a hang: in
    ///     a suite whose tests all run at once on a small machine, the task that sends the awaited
    ///     request can be queued behind the other tests' work for more than a minute.
    /// - Throws: ``LocalAPIServerError/waitTimedOut(_:)`` after `timeout`, `CancellationError`
    ///   when the task is cancelled.
    @discardableResult
    public func waitForRequests(
        count: Int, matching matcher: RequestMatcher = .any, timeout: Duration = .seconds(600)
    ) async throws -> [RecordedRequest] {
        let snapshot = try await state.wait(timeout: timeout, description: "\(count) request(s) matching \(matcher)") {
            $0.requests.lazy.filter(matcher.matches).count >= count
        }
        return snapshot.requests.filter(matcher.matches)
    }

    /// Waits until `condition` holds for the server's snapshot (re-checked on every request and
    /// connection change) and returns that snapshot.
    /// - Parameters:
    ///   - timeout: a failure bound, not a sleep; the default, ten minutes, only catches a hang (as
    ///     for ``waitForRequests(count:matching:timeout:)``).
    ///   - description: names the condition in the timeout error.
    ///   - condition: evaluated on the server's snapshot; true ends the wait.
    /// - Throws: ``LocalAPIServerError/waitTimedOut(_:)`` after `timeout`, `CancellationError`.
    @discardableResult
    public func waitUntil(
        timeout: Duration = .seconds(600), description: String = "condition",
        _ condition: @escaping @Sendable (LocalAPIServerSnapshot) -> Bool
    ) async throws -> LocalAPIServerSnapshot {
        try await state.wait(timeout: timeout, description: description, condition: condition)
    }

    // MARK: Scripting

    /// Appends `responses`, in order, to the script for requests `matcher` selects.
    public func enqueue(_ responses: ScriptedResponse..., for matcher: RequestMatcher = .any) {
        state.enqueue(responses, for: matcher)
    }

    /// Appends `responses`, in order, to the script for requests `matcher` selects.
    public func enqueue(contentsOf responses: [ScriptedResponse], for matcher: RequestMatcher = .any) {
        state.enqueue(responses, for: matcher)
    }

    /// Script entries not consumed yet.
    public var pendingScriptedResponseCount: Int { state.pendingScriptCount }

    /// Drops every script entry not consumed yet.
    public func clearScript() {
        state.clearScripts()
    }

    // MARK: Contract data

    /// Replaces the `data` (`{profile, experiences, changes}`) of standard Experience answers for
    /// new and/or identified visitors (`nil` keeps the current one). `profile.id`/`stableId` are
    /// still set per request.
    public func setExperienceData(newVisitor: JSONValue? = nil, identifiedVisitor: JSONValue? = nil) {
        state.setData(newVisitor: newVisitor, identifiedVisitor: identifiedVisitor)
    }

    /// Makes standard Experience answers depend on the profile: `provider(profileID)` returns the
    /// `data` (`{profile, experiences, changes}`) for that visitor, or nil to use the new/identified
    /// data. For tests where visitors must get different selections (isolation, caching).
    public func setExperienceData(perProfile provider: (@Sendable (_ profileID: String) -> JSONValue?)?) {
        state.setDataProvider(provider)
    }

    /// The most Experience requests naming one profile id (`…/profiles/<id>`) that the server
    /// was answering at the same time, by profile id: 1 when calls for that profile never
    /// overlapped. A request counts from its arrival until its answer is written (a scripted
    /// delay included).
    public var peakConcurrentProfileRequests: [String: Int] { state.peakConcurrentProfileRequests }

    /// Every Insights batch received by standard answers, in arrival order.
    public var insightsBatches: [JSONValue] { state.insightsBatches }

    /// Every Insights event received (the `events` of every batch, in order).
    public var insightsEvents: [JSONValue] {
        state.insightsBatches.flatMap { $0["events"]?.arrayValue ?? [] }
    }

    /// Whether the server knows `profileID` and, if so, whether it is identified.
    public func isIdentified(profileID: String) -> Bool? {
        state.isIdentified(profileID: profileID)
    }

    /// Profile ids the server knows (``fixtureProfileID`` plus every created or updated one).
    public var knownProfileIDs: Set<String> { state.knownProfileIDs }

    /// Forgets created profiles and stored Insights batches (like `POST reset-state`). Recorded
    /// requests and scripts are kept.
    public func resetState() {
        state.resetState()
    }
}
