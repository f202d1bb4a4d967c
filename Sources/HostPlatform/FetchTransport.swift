/// One HTTP request the host delivers (an Experience or Insights request, a CDA query).
public struct FetchRequest: Sendable, Equatable {
    /// The URL to request.
    public var url: String
    /// The HTTP method, for example `GET` or `POST`.
    public var method: String
    /// Request header values by header name.
    public var headers: [String: String]
    /// The request body as text; nil sends no body.
    public var body: String?

    /// Creates a request.
    /// - Parameters:
    ///   - url: the URL to request.
    ///   - method: the HTTP method, for example `GET`.
    ///   - headers: header values by name; none by default.
    ///   - body: the body as text; nil (the default) sends no body.
    public init(url: String, method: String, headers: [String: String] = [:], body: String? = nil) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
    }
}

/// The answer to a ``FetchRequest``. Any HTTP status is a response, not an error.
public struct FetchResponse: Sendable, Equatable {
    /// The HTTP status code, for example 200 or 404.
    public var status: Int
    /// Response header values by header name.
    public var headers: [String: String]
    /// The response body as text; empty when there is none.
    public var body: String

    /// Creates a response.
    /// - Parameters:
    ///   - status: the HTTP status code.
    ///   - headers: header values by name; none by default.
    ///   - body: the body as text; empty by default.
    public init(status: Int, headers: [String: String] = [:], body: String = "") {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Carries the host's HTTP requests to the network.
///
/// Contract: `send` returns the response for any HTTP status and throws only for transport
/// failures (refused URL, timeout, connection error); the error's description is the failure's
/// reason. Cancellation of the calling task must cancel the request and release what it holds
/// (its connection) promptly: a sender cancels that task when its caller gives up (a request's
/// budget ran out, a shutdown).
public protocol FetchTransport: Sendable {
    /// Sends `request` and returns its response, whatever its HTTP status; cancelling the calling
    /// task must cancel the request promptly.
    /// - Throws: only for transport failures; the error's description is the failure's reason.
    func send(_ request: FetchRequest) async throws -> FetchResponse
}

/// A transport for a host that must send nothing (an offline client): every request fails
/// without touching the network.
public struct UnconfiguredFetchTransport: FetchTransport {
    /// Creates the transport.
    public init() {}

    /// Fails at once without touching the network.
    /// - Throws: ``FetchTransportError/notConfigured``, always.
    public func send(_ request: FetchRequest) async throws -> FetchResponse {
        throw FetchTransportError.notConfigured
    }
}

/// An error of a ``FetchTransport`` that says whether its request ran out of time. Delivery
/// reports a timeout by this, never by the error's text; an error that does not conform is no
/// timeout.
public protocol FetchTimeoutReporting: Error {
    /// True when the request did not complete within its deadline.
    var isTimeout: Bool { get }
}

/// Transport failures reported by this module's transports.
public enum FetchTransportError: Error, Sendable, CustomStringConvertible {
    /// The host was given no transport (``UnconfiguredFetchTransport``), so no request can be
    /// sent.
    case notConfigured

    public var description: String {
        switch self {
        case .notConfigured: return "no transport configured"
        }
    }
}
