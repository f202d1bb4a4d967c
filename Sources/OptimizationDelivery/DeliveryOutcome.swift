import Foundation
import HostPlatform

/// What an API's answer to one delivery request means for the events it carried.
public enum DeliveryOutcome: Sendable, Equatable {
    /// 2xx: the events arrived.
    case delivered(status: Int)
    /// Worth trying again later: 408, 429, 5xx, any other status that is not 2xx or 4xx (an
    /// unfollowed 3xx), or a transport failure (`status` 0). `retryAfterMilliseconds` is the
    /// server's `Retry-After` (429 and 503 only), honoured as the shortest wait.
    case retry(status: Int, reason: String, retryAfterMilliseconds: Double?)
    /// Any other 4xx: the API refuses these events; retrying cannot help (the Insights queue
    /// bisects a refused request of several profiles to find the refused ones).
    case drop(status: Int, reason: String)
    /// 401, 403 or 404: a wrong client id, environment or base URL; delivery to this API stops (the
    /// Insights queue: after ``DeliveryPolicy/maxConsecutiveCredentialRefusals`` in a row, see
    /// `InsightsQueue`).
    case disable(status: Int, reason: String)

    /// The kind of an HTTP status: `success` (2xx), `disable` (401, 403, 404), `drop` (other 4xx
    /// but 408 and 429) or `retry` (everything else). The one table of status kinds: the queues,
    /// the service's traces and metrics and, through `statusKindTable`, a service engine's
    /// Experience outcomes all read it. Pure; thread-safe.
    public static func kind(ofStatus status: Int) -> String {
        switch status {
        case 200...299: return "success"
        case 401, 403, 404: return "disable"
        case 408, 429: return "retry"
        case 400...499: return "drop"
        default: return "retry"
        }
    }

    /// The outcome of a response (reasons never carry the URL, whose path names a profile).
    /// - Parameters:
    ///   - response: the API's answer.
    ///   - api: the API's name for the reason, for example `"Insights"`.
    ///   - now: the clock's time in milliseconds since the epoch (for an HTTP-date `Retry-After`).
    public init(response: FetchResponse, api: String, now: Double) {
        let status = response.status
        let reason = "\(api) API answered \(status)" + (Self.reasonPhrases[status].map { " " + $0 } ?? "")
        switch Self.kind(ofStatus: status) {
        case "success": self = .delivered(status: status)
        case "disable": self = .disable(status: status, reason: reason)
        case "drop": self = .drop(status: status, reason: reason)
        default:
            let retryAfter = status == 429 || status == 503
                ? Self.retryAfterMilliseconds(Self.header("retry-after", in: response.headers), now: now) : nil
            self = .retry(status: status, reason: reason, retryAfterMilliseconds: retryAfter)
        }
    }

    /// The outcome of a transport failure (no answer): a retry with status 0.
    public init(transportError error: any Error, api: String) {
        self = .retry(status: 0, reason: "\(api) API request failed: \(error)", retryAfterMilliseconds: nil)
    }

    /// The standard reason phrases of the statuses an API commonly answers (reasons name them).
    static let reasonPhrases: [Int: String] = [
        200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
        404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout", 409: "Conflict", 413: "Payload Too Large",
        422: "Unprocessable Entity", 429: "Too Many Requests", 500: "Internal Server Error", 501: "Not Implemented",
        502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
    ]

    /// The HTTP status (0 for a transport failure).
    public var status: Int {
        switch self {
        case .delivered(let status), .retry(let status, _, _), .drop(let status, _), .disable(let status, _): return status
        }
    }

    /// A `Retry-After` value in milliseconds: delay-seconds (`"120"`) or an HTTP date (relative to
    /// `now`, never negative); nil when absent or unreadable.
    public static func retryAfterMilliseconds(_ value: String?, now: Double) -> Double? {
        guard let text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Double(text).map { $0 * 1000 }
        }
        guard let date = httpDate(text) else { return nil }
        return max(0, date.timeIntervalSince1970 * 1000 - now)
    }

    private static func header(_ name: String, in headers: [String: String]) -> String? {
        if let value = headers[name] { return value }
        return headers.first { $0.key.lowercased() == name }?.value
    }

    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form RFC 9110 requires senders to use.
    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
