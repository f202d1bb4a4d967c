/// How an ``OFREPEvaluator`` authenticates its callers, evaluates and caches.
///
/// A value type; `Sendable`.
public struct OFREPConfiguration: Sendable {
    /// A credential an OFREP caller presents.
    public enum Credential: Sendable, Hashable {
        /// `Authorization: Bearer <token>`.
        case bearerToken(String)
        /// `X-API-Key: <key>`.
        case apiKey(String)
    }

    /// What a request's `context.targetingKey` is taken to be.
    public enum TargetingKeys: Sendable {
        /// A sealed ``OFREPTargetingToken`` the application issued for its visitor, opened with
        /// this codec (purpose ``OFREPTargetingToken/purpose``). A bare profile id is refused
        /// (`400 INVALID_CONTEXT`). The choice for routes that browsers or other visitors'
        /// devices can reach.
        case sealedTokens(SignedValueCodec)
        /// A profile id, trusted as it is: whoever holds a credential may read any profile's
        /// flags and experience metadata by naming its id. Only for deployments whose every
        /// credential holder is a server of the same operator (never a browser or a device).
        case profileIds
    }

    /// Every credential that is accepted; a request must present one of them. Never empty (the
    /// evaluator refuses to be created without one: OFREP routes are not served
    /// unauthenticated), and each at least ``minimumCredentialLength`` bytes long.
    public var credentials: [Credential]
    /// How `context.targetingKey` names the visitor.
    public var targetingKeys: TargetingKeys
    /// The shortest bearer token or API key accepted at creation, in UTF-8 bytes: 32.
    public static let minimumCredentialLength = 32
    /// How long a profile's evaluated flags are served from memory before the Experience API is
    /// asked again, on the service clock; default 5 s.
    public var cacheTimeToLive: Duration
    /// Most profiles whose flags are kept; the least recently used go first. Default 10 000.
    public var cacheCapacity: Int
    /// Whether an evaluation for a visitor whose context says `consent: true` is a stored `page`
    /// event (the Experience API records the visit). Default false: every evaluation is a
    /// preflight, which stores nothing. A visitor without consent is always evaluated in
    /// preflight, whatever this says.
    public var storesConsentedEvaluations: Bool
    /// The `Retry-After` of a 429 answer (the profile is overloaded at the Experience API), in
    /// whole seconds rounded up; default 1 s.
    public var overloadRetryAfter: Duration
    /// Largest request body read, in bytes; a larger one is a `PARSE_ERROR`. Default 65 536.
    public var maximumBodyBytes: Int

    /// Creates a configuration.
    /// - Parameters:
    ///   - credentials: the accepted bearer tokens and API keys (at least one, each at least
    ///     ``minimumCredentialLength`` bytes).
    ///   - targetingKeys: what `context.targetingKey` is: a sealed token (for routes visitors
    ///     can reach) or, server-side only, a profile id.
    ///   - cacheTimeToLive: how long evaluated flags are reused; default 5 s.
    ///   - cacheCapacity: most profiles cached; default 10 000.
    ///   - storesConsentedEvaluations: a consented visitor's evaluation is a stored `page`; default false.
    ///   - overloadRetryAfter: `Retry-After` of a 429; default 1 s.
    ///   - maximumBodyBytes: largest request body; default 65 536.
    public init(
        credentials: [Credential], targetingKeys: TargetingKeys, cacheTimeToLive: Duration = .seconds(5), cacheCapacity: Int = 10_000,
        storesConsentedEvaluations: Bool = false, overloadRetryAfter: Duration = .seconds(1), maximumBodyBytes: Int = 65_536
    ) {
        self.credentials = credentials
        self.targetingKeys = targetingKeys
        self.cacheTimeToLive = cacheTimeToLive
        self.cacheCapacity = cacheCapacity
        self.storesConsentedEvaluations = storesConsentedEvaluations
        self.overloadRetryAfter = overloadRetryAfter
        self.maximumBodyBytes = maximumBodyBytes
    }
}

/// Why an ``OFREPEvaluator`` cannot be created.
public enum OFREPConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No credential, or an empty token or key.
    case missingCredentials
    /// A token or key shorter than ``OFREPConfiguration/minimumCredentialLength`` bytes (a
    /// guessable credential); the value is its kind, `bearer token` or `API key`.
    case weakCredential(String)
    /// A bound is not positive; the value names it.
    case invalidBound(String)

    public var description: String {
        switch self {
        case .missingCredentials: return "OFREP needs at least one non-empty bearer token or API key"
        case .weakCredential(let kind):
            return "an OFREP \(kind) must be at least \(OFREPConfiguration.minimumCredentialLength) bytes long"
        case .invalidBound(let name): return "OFREP \(name) must be positive"
        }
    }
}
