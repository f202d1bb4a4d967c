/// An HTTP request as an ``OFREPEvaluator`` reads it: framework-neutral, so any server (the
/// Hummingbird and Vapor integrations, a hand-written NIO handler) can hand one over.
public struct OFREPRequest: Sendable {
    /// The method, such as `POST`.
    public var method: String
    /// The path without the query, such as `/ofrep/v1/evaluate/flags/hero-cta-color`.
    public var path: String
    /// The header fields in arrival order; names compare case-insensitively.
    public var headers: [(name: String, value: String)]
    /// The body's bytes.
    public var body: [UInt8]
    /// The server stopped reading a body larger than ``OFREPConfiguration/maximumBodyBytes``
    /// (``body`` is then ignored): the answer is a `PARSE_ERROR` once the caller is authenticated.
    public var bodyExceedsLimit: Bool

    /// Creates a request.
    /// - Parameters:
    ///   - method: the method, such as `POST`.
    ///   - path: the path without the query.
    ///   - headers: the header fields in arrival order.
    ///   - body: the body's bytes.
    ///   - bodyExceedsLimit: the server did not read a body over the bound; default false.
    public init(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8], bodyExceedsLimit: Bool = false) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.bodyExceedsLimit = bodyExceedsLimit
    }

    /// The values of header `name` (case-insensitive), in order.
    public func values(forHeader name: String) -> [String] {
        headers.compactMap { $0.name.caseInsensitiveEquals(name) ? $0.value : nil }
    }
}

/// The answer of an ``OFREPEvaluator``: status, header fields and a JSON body (empty for 304 and
/// the authentication failures).
public struct OFREPResponse: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// Header fields to send (`Content-Type`, `ETag`, `Retry-After`, `Allow`, `WWW-Authenticate`).
    public var headers: [String: String]
    /// The body's bytes.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

extension String {
    func caseInsensitiveEquals(_ other: String) -> Bool {
        utf8.count == other.utf8.count && lowercased() == other.lowercased()
    }
}
