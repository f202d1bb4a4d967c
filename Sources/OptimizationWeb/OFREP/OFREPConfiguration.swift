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

    /// Every credential that is accepted; a request must present one of them. Never empty (the
    /// evaluator refuses to be created without one: OFREP routes are not served unauthenticated).
    public var credentials: [Credential]
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
    ///   - credentials: the accepted bearer tokens and API keys (at least one, none empty).
    ///   - cacheTimeToLive: how long evaluated flags are reused; default 5 s.
    ///   - cacheCapacity: most profiles cached; default 10 000.
    ///   - storesConsentedEvaluations: a consented visitor's evaluation is a stored `page`; default false.
    ///   - overloadRetryAfter: `Retry-After` of a 429; default 1 s.
    ///   - maximumBodyBytes: largest request body; default 65 536.
    public init(
        credentials: [Credential], cacheTimeToLive: Duration = .seconds(5), cacheCapacity: Int = 10_000,
        storesConsentedEvaluations: Bool = false, overloadRetryAfter: Duration = .seconds(1), maximumBodyBytes: Int = 65_536
    ) {
        self.credentials = credentials
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
    /// A bound is not positive; the value names it.
    case invalidBound(String)

    public var description: String {
        switch self {
        case .missingCredentials: return "OFREP needs at least one non-empty bearer token or API key"
        case .invalidBound(let name): return "OFREP \(name) must be positive"
        }
    }
}
