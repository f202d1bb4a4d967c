/// Why a ``ContentfulWebhookVerifier`` refused to be created or refused a request. Messages never
/// contain the secret, the signature or header values.
public enum ContentfulWebhookError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The signing secret is not exactly 64 characters (as Contentful counts them: UTF-16 code
    /// units).
    case invalidSecret
    /// The time to live is zero or negative.
    case invalidTimeToLive
    /// The request has no `x-contentful-signature` header.
    case missingSignature
    /// The request has no `x-contentful-timestamp` header.
    case missingTimestamp
    /// The `x-contentful-timestamp` header is not a Unix time in milliseconds (1 to 16 decimal
    /// digits).
    case invalidTimestamp
    /// The request has no `x-contentful-signed-headers` header.
    case missingSignedHeaders
    /// A header named in `x-contentful-signed-headers` is not in the request; the name as listed.
    case missingSignedHeader(String)
    /// The request was signed longer ago than the verifier's time to live.
    case expired
    /// The request's timestamp is later than now by the verifier's time to live or more.
    case timestampInFuture
    /// The signature does not match the request (its method, path, signed headers or body changed,
    /// or it was signed with another secret), or is not 64 hexadecimal digits.
    case signatureMismatch
    /// The request target has more than one `?`: what follows the second is not signed, so the
    /// request is not taken.
    case unsignedTarget
    /// A request with this signature was already taken within the time to live (a captured
    /// webhook sent again).
    case replayed

    /// A fixed word for the refusal, for logs and metrics: never any text of the request.
    public var reason: String {
        switch self {
        case .invalidSecret: return "invalid_secret"
        case .invalidTimeToLive: return "invalid_time_to_live"
        case .missingSignature: return "missing_signature"
        case .missingTimestamp: return "missing_timestamp"
        case .invalidTimestamp: return "invalid_timestamp"
        case .missingSignedHeaders: return "missing_signed_headers"
        case .missingSignedHeader: return "missing_signed_header"
        case .expired: return "expired"
        case .timestampInFuture: return "timestamp_in_future"
        case .signatureMismatch: return "signature_mismatch"
        case .unsignedTarget: return "unsigned_target"
        case .replayed: return "replayed"
        }
    }

    /// One sentence saying what was refused.
    public var description: String {
        switch self {
        case .invalidSecret: return "the Contentful webhook signing secret must be exactly 64 characters"
        case .invalidTimeToLive: return "the Contentful webhook time to live must be positive"
        case .missingSignature: return "the webhook request has no x-contentful-signature header"
        case .missingTimestamp: return "the webhook request has no x-contentful-timestamp header"
        case .invalidTimestamp: return "the webhook request's x-contentful-timestamp is not a Unix time in milliseconds"
        case .missingSignedHeaders: return "the webhook request has no x-contentful-signed-headers header"
        case .missingSignedHeader(let name): return "the webhook request lacks the signed header \"\(name)\""
        case .expired: return "the webhook request was signed too long ago"
        case .timestampInFuture: return "the webhook request's timestamp is too far in the future"
        case .signatureMismatch: return "the webhook request's signature does not match"
        case .unsignedTarget: return "the webhook request's target has a second ?, whose text is not signed"
        case .replayed: return "a webhook request with this signature was already taken"
        }
    }
}
