import Foundation

/// Which requests a script entry or a query applies to. Paths are the request path on the server,
/// mount included (for example `/experience/v2/organizations/o/environments/main/profiles`).
public enum RequestMatcher: Sendable, Equatable {
    /// Every request.
    case any
    /// Requests under `/experience/`.
    case experience
    /// Requests under `/insights/`.
    case insights
    /// Requests whose path starts with the given string.
    case pathPrefix(String)
    /// Requests with this method (case-insensitive) whose path starts with the given string.
    case method(String, pathPrefix: String)
    /// Requests whose body contains the given text (for example a marker in one visitor's event,
    /// to refuse every request that carries it, such as an Insights batch and its bisected halves).
    case bodyContains(String)

    /// True when `request` is selected.
    public func matches(_ request: RecordedRequest) -> Bool {
        if case .bodyContains(let text) = self { return request.body.contains(text) }
        return matches(method: request.method, path: request.path)
    }

    func matches(method: String, path: String) -> Bool {
        switch self {
        case .any: return true
        case .experience: return path.hasPrefix("/experience/")
        case .insights: return path.hasPrefix("/insights/")
        case .pathPrefix(let prefix): return path.hasPrefix(prefix)
        case .method(let wanted, let prefix): return method.uppercased() == wanted.uppercased() && path.hasPrefix(prefix)
        case .bodyContains: return false
        }
    }
}

/// How the server answers one scripted request. Scripts are consumed first-in first-out by the
/// first entry whose ``RequestMatcher`` selects the request; a request no entry selects gets
/// ``standard``.
public indirect enum ScriptedResponse: Sendable, Equatable {
    /// The standard answer, as the real APIs would give it (what an empty script does).
    case standard
    /// Answer with `status`, `body` and `headers` (a non-empty body without a `content-type` header
    /// is sent as `application/json`).
    case status(Int, body: String = "", headers: [String: String] = [:])
    /// Answer `status` (429 or 503) with `Retry-After: seconds` and a JSON error body.
    case retryAfter(seconds: Int, status: Int = 429)
    /// Wait `duration` of real time, then answer as `then` (used for timeout tests only).
    case delay(Duration, then: ScriptedResponse = .standard)
    /// Send a 200 head declaring a `Content-Length` larger than the bytes that follow, then close
    /// the connection.
    case truncatedBody
    /// Close the connection without sending any response.
    case dropConnection
    /// Send a 200 head declaring a `Content-Length` and the first bytes of the body, then nothing
    /// more, keeping the connection open (pins that client timeouts cover the body too).
    case stalledBody
    /// Never answer: hold the request, and its connection, until the client closes the
    /// connection (or the server stops). Nothing is scheduled, so a client that never gives up
    /// keeps it forever; ``LocalAPIServerSnapshot/connections`` shows when the client let go.
    case hang

    /// API v2's error answer: `status` with the envelope `{"message", "data": {}, "error":
    /// {"code"}}` (for example `apiError(429, code: "ERR_PROFILE_OVERLOAD")`).
    public static func apiError(_ status: Int, code: String, message: String = "scripted error") -> ScriptedResponse {
        let envelope: JSONValue = ["message": .string(message), "data": [:], "error": ["code": .string(code)]]
        return .status(status, body: (try? envelope.jsonText()) ?? "")
    }

    /// 429 `ERR_PROFILE_OVERLOAD`: the Experience API refuses concurrent work on one profile.
    public static var profileOverload: ScriptedResponse { apiError(429, code: "ERR_PROFILE_OVERLOAD", message: "Too many concurrent requests for this profile") }
}

/// One request the server received, recorded when its last byte arrived.
public struct RecordedRequest: Sendable, Equatable, CustomStringConvertible {
    /// 1-based arrival order across the whole server.
    public let sequence: Int
    /// 1-based id of the TCP connection it arrived on (in acceptance order).
    public let connectionID: Int
    /// Upper-case method.
    public let method: String
    /// Path without the query, percent-encoded as received.
    public let path: String
    /// The query items in order (percent-decoded); empty when there is no query.
    public let queryItems: [URLQueryItem]
    /// Header names lower-cased; repeated headers joined with `", "`.
    public let headers: [String: String]
    /// The body decoded as UTF-8 (empty when there is none).
    public let body: String

    /// The header `name` (case-insensitive).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The first value of the query item `name`.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// The body parsed as JSON, or nil.
    public var json: JSONValue? {
        body.isEmpty ? nil : try? JSONValue(jsonText: body)
    }

    /// The events the request carried: those of an Experience request (`{events}`) or of an
    /// Insights request (`[{profile, events}]`), in order; empty when the body is not JSON.
    public var deliveredEvents: [JSONValue] {
        guard let body = json else { return [] }
        if let batches = body.arrayValue { return batches.flatMap { $0["events"]?.arrayValue ?? [] } }
        return body["events"]?.arrayValue ?? []
    }

    public var description: String {
        let query = queryItems.isEmpty ? "" : "?" + queryItems.map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "&")
        return "#\(sequence) conn \(connectionID) \(method) \(path)\(query)"
    }
}

/// What the server has seen so far (a consistent copy).
public struct LocalAPIServerSnapshot: Sendable {
    /// Every request, in arrival order.
    public let requests: [RecordedRequest]
    /// TCP connections accepted since start.
    public let acceptedConnectionCount: Int
    /// TCP connections currently open.
    public let openConnectionCount: Int
    /// The most connections that were open at the same time since the server was created.
    public let peakOpenConnectionCount: Int
    /// Every TCP connection accepted since the server was created, in acceptance order, with
    /// when it opened and closed.
    public let connections: [ServerConnection]

    /// TCP connections closed (by either side) since the server was created.
    public var closedConnectionCount: Int { acceptedConnectionCount - openConnectionCount }
}

/// One TCP connection the server accepted. Times are the server's reading of
/// `ContinuousClock` when its event loop saw the connection become active and inactive.
public struct ServerConnection: Sendable, Equatable {
    /// 1-based, in acceptance order (``RecordedRequest/connectionID``).
    public let id: Int
    /// When the server's event loop saw the connection become active.
    public let openedAt: ContinuousClock.Instant
    /// Nil while the connection is open.
    public internal(set) var closedAt: ContinuousClock.Instant?
}

/// Errors of ``LocalOptimizationAPIServer``.
public enum LocalAPIServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server could not be started: its bound socket reported no local port.
    case notStarted
    /// `start()` was called while the server was already starting or running.
    case alreadyStarted
    /// A wait ran out of time; `detail` says what was awaited and what was seen.
    case waitTimedOut(String)

    public var description: String {
        switch self {
        case .notStarted: return "the local API server is not started"
        case .alreadyStarted: return "the local API server is already started"
        case .waitTimedOut(let detail): return "timed out waiting for the local API server: \(detail)"
        }
    }
}
