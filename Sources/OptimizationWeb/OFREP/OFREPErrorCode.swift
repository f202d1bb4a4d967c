/// The error codes of OFREP answers (the OpenFeature error codes the protocol uses).
public enum OFREPErrorCode: String, Sendable, Equatable, CaseIterable {
    /// The body is not JSON, not an object, or larger than the configured bound.
    case parseError = "PARSE_ERROR"
    /// `context.targetingKey` (the visitor's profile id) is missing or empty.
    case targetingKeyMissing = "TARGETING_KEY_MISSING"
    /// The context is not an object, or a member has the wrong type or an invalid value (a
    /// targeting key that is not a profile id, a non-boolean `consent`), or the visitor's consent
    /// does not allow an evaluation.
    case invalidContext = "INVALID_CONTEXT"
    /// The profile has no flag with that key.
    case flagNotFound = "FLAG_NOT_FOUND"
    /// Anything else: the Experience API failed, timed out or refused the evaluation.
    case general = "GENERAL"
}
