import OptimizationJSON
import OptimizationTransport
/// Why a ``ContentfulDeliverySource`` fetch failed. Messages carry the CDA's own `message` where
/// it sent one; they never contain the access token.
public enum ContentfulDeliveryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration cannot be used (empty space or token, bad base URL, include depth
    /// outside 0…10, locale `*`).
    case invalidConfiguration(String)
    /// 401: the access token was rejected.
    case unauthorized(String)
    /// 403: the token may not read this space or environment.
    case forbidden(String)
    /// 404: no such space or environment.
    case notFound(String)
    /// 400: the CDA refused the query (unknown locale, bad field…).
    case badRequest(String)
    /// No entry with this id exists (or is published) in the space.
    case entryNotFound(id: String)
    /// No entry of `contentType` has `fields.<field>` equal to `value`.
    case noMatch(contentType: String, field: String, value: String)
    /// More than one entry of `contentType` has `fields.<field>` equal to `value`; `ids` are the
    /// matches the CDA returned.
    case ambiguousMatch(contentType: String, field: String, value: String, ids: [String])
    /// 429 answers kept coming after the configured number of waits; the last reset, in seconds.
    case rateLimited(resetSeconds: Int)
    /// A 5xx answer (the last one, after retries), with the CDA's message when it sent one.
    case serverError(status: Int, message: String)
    /// Any other unexpected HTTP status.
    case unexpectedStatus(Int, String)
    /// The transport failed (the last failure, after retries).
    case transport(HTTPTransportError)
    /// The fetch's deadline (``ContentfulDeliveryConfiguration/fetchDeadline``) would have passed
    /// before the next attempt; `lastFailure` says why the previous attempt failed.
    case deadlineExceeded(after: Duration, lastFailure: String)
    /// The 200 answer is not a CDA collection the resolver accepts.
    case invalidResponse(String)
    /// An entry id given to the source is not one Contentful can have (``ContentfulEntryId``: 1
    /// to 64 characters of `A`–`Z`, `a`–`z`, `0`–`9`, `.`, `_`, `-`); nothing was fetched,
    /// cached or sent to the entry store. The id itself is not repeated (it may be arbitrary
    /// input).
    case invalidEntryId

    /// True for failures a later attempt may not repeat (5xx, rate limit, transport, deadline):
    /// the ones a cache may answer with its last good copy (stale-if-error).
    public var isTransient: Bool {
        switch self {
        case .rateLimited, .serverError, .transport, .deadlineExceeded: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .invalidConfiguration(let detail): return "invalid Contentful configuration: \(detail)"
        case .unauthorized(let message): return "the Contentful access token was rejected (401): \(message)"
        case .forbidden(let message): return "the Contentful access token may not read this space (403): \(message)"
        case .notFound(let message): return "Contentful space or environment not found (404): \(message)"
        case .badRequest(let message): return "Contentful refused the query (400): \(message)"
        case .entryNotFound(let id): return "no entry with id \"\(id)\" in the space"
        case .noMatch(let type, let field, let value): return "no \(type) entry has fields.\(field) = \"\(value)\""
        case .ambiguousMatch(let type, let field, let value, let ids):
            return "\(ids.count) \(type) entries have fields.\(field) = \"\(value)\": \(ids.joined(separator: ", "))"
        case .rateLimited(let reset): return "Contentful rate limit still exceeded after waiting (reset in \(reset) s)"
        case .serverError(let status, let message): return "Contentful server error \(status): \(message)"
        case .unexpectedStatus(let status, let message): return "unexpected Contentful status \(status): \(message)"
        case .transport(let error): return "Contentful unreachable: \(error)"
        case .deadlineExceeded(let deadline, let last):
            return "Contentful fetch did not complete within \(deadline.wholeMilliseconds) ms (last failure: \(last))"
        case .invalidResponse(let detail): return "invalid Contentful response: \(detail)"
        case .invalidEntryId:
            return "an entry id must be 1 to \(ContentfulEntryId.maximumLength) characters of A-Z, a-z, 0-9, '.', '_' or '-'"
        }
    }
}
