/// One HTTP request made by the hosted JavaScript through `__nativeFetch`.
public struct FetchRequest: Sendable, Equatable {
    public var url: String
    public var method: String
    public var headers: [String: String]
    public var body: String?

    public init(url: String, method: String, headers: [String: String] = [:], body: String? = nil) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
    }
}

/// The answer to a ``FetchRequest``. Any HTTP status is a response, not an error.
public struct FetchResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [String: String]
    public var body: String

    public init(status: Int, headers: [String: String] = [:], body: String = "") {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Carries the hosted JavaScript's HTTP requests to the network.
///
/// Contract: `send` returns the response for any HTTP status and throws only for transport
/// failures (refused URL, timeout, connection error); the error's description becomes the
/// `errorMessage` JavaScript sees. Cancellation of the calling task must cancel the request and
/// release what it holds (its connection) promptly: the engine cancels that task when JavaScript
/// aborts the fetch (`__nativeCancelFetch`) or the engine closes, and delivers nothing for it.
public protocol FetchTransport: Sendable {
    func send(_ request: FetchRequest) async throws -> FetchResponse
}

/// The transport of an engine that was given none: every request fails without touching the
/// network.
public struct UnconfiguredFetchTransport: FetchTransport {
    public init() {}

    public func send(_ request: FetchRequest) async throws -> FetchResponse {
        throw FetchTransportError.notConfigured
    }
}

/// Transport failures reported by this module's transports.
public enum FetchTransportError: Error, Sendable, CustomStringConvertible {
    case notConfigured

    public var description: String {
        switch self {
        case .notConfigured: return "no transport configured"
        }
    }
}
