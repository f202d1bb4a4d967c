import HostPlatform

/// Failures of the HTTP transport (``HTTPFetchTransport``) and of its host allow-list.
///
/// An HTTP status is never an `HTTPTransportError`: every status, 4xx and 5xx included, is returned as a
/// `FetchResponse`. These errors are transport failures only; their ``description`` is short and
/// becomes the failure reason of a delivery (which the shared JavaScript core reads too), so it
/// never contains request or response bodies.
public enum HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is outside every allowed base URL (compared by scheme, host, port and
    /// path prefix). No network attempt was made.
    case urlNotAllowed(String)
    /// A configured base URL is not an absolute `http`/`https` URL with a host.
    case invalidBaseURL(String)
    /// The request URL could not be parsed or used.
    case invalidURL(String)
    /// The request did not complete (connect, send, response head and whole body) within the
    /// per-request timeout, in milliseconds. The request was cancelled and its connection closed.
    case timeout(milliseconds: Int)
    /// No connection could be established (refused, unreachable, DNS, TLS handshake).
    case connectionFailed(String)
    /// The connection closed before a complete response arrived (no response at all, or a body
    /// shorter than its declared `Content-Length`).
    case connectionClosed
    /// The response could not be parsed as HTTP.
    case invalidResponse(String)
    /// The response body is larger than the configured cap, in bytes.
    case responseTooLarge(limitBytes: Int)
    /// The calling task was cancelled; the request was cancelled with it.
    case cancelled
    /// ``HTTPFetchTransport/shutdown()`` was called; the transport makes no more requests.
    case shutDown
    /// Any other transport failure, with a short reason.
    case transportFailure(String)

    public var description: String {
        switch self {
        case .urlNotAllowed(let url):
            return "request refused: \(url) is outside the configured Experience and Insights base URLs"
        case .invalidBaseURL(let url): return "invalid base URL: \(url)"
        case .invalidURL(let url): return "invalid request URL: \(url)"
        case .timeout(let milliseconds): return "request timed out after \(milliseconds) ms"
        case .connectionFailed(let reason): return "could not connect: \(reason)"
        case .connectionClosed: return "connection closed before the response was complete"
        case .invalidResponse(let reason): return "invalid HTTP response: \(reason)"
        case .responseTooLarge(let limit): return "response body exceeds \(limit) bytes"
        case .cancelled: return "request cancelled"
        case .shutDown: return "transport is shut down"
        case .transportFailure(let reason): return "transport error: \(reason)"
        }
    }
}

/// The former name of ``HTTPTransportError``.
@available(*, deprecated, renamed: "HTTPTransportError")
public typealias DeliveryError = HTTPTransportError

extension HTTPTransportError: FetchTimeoutReporting {
    /// True for ``timeout(milliseconds:)``: the request did not complete within its deadline.
    public var isTimeout: Bool {
        if case .timeout = self { return true }
        return false
    }
}
