import OptimizationJSON
import OptimizationTransport
/// Where and how a ``ContentfulDeliverySource`` fetches entries. Units are in the names.
public struct ContentfulDeliveryConfiguration: Sendable {
    /// Which Contentful API serves the entries.
    public enum API: Sendable, Equatable {
        /// Published content, `https://cdn.contentful.com`.
        case delivery
        /// Drafts and published content, `https://preview.contentful.com` (needs a preview token).
        case preview

        /// The API's public base URL.
        public var defaultBaseURL: String {
            switch self {
            case .delivery: return "https://cdn.contentful.com"
            case .preview: return "https://preview.contentful.com"
            }
        }
    }

    /// The space id.
    public var spaceId: String
    /// The environment id. Default `master`.
    public var environment: String
    /// The Content Delivery (or Preview) API access token, sent as `Authorization: Bearer …`.
    /// Never logged.
    public var accessToken: String
    /// Delivery or preview. Default ``API/delivery``.
    public var api: API
    /// Overrides the API's base URL (for tests: a `LocalContentfulDeliveryServer`). Nil: the
    /// API's public host.
    public var baseURL: String?
    /// The locale entries are fetched in (`locale=`); nil: the space's default locale. `*` is
    /// refused: the resolver needs single-locale entries.
    public var locale: String?
    /// How many levels of links the CDA resolves into `includes` (0…10). Default 10: variants
    /// are two levels below a baseline, rich-text embeds deeper.
    public var includeDepth: Int
    /// Real-time limit of one HTTP attempt (connect, head and whole body). Default 5 s.
    public var requestTimeout: Duration
    /// Bound of one fetch, retries and rate-limit waits included, on the source's clock.
    /// Default 15 s. A wait that would end after it is not started: the fetch fails.
    public var fetchDeadline: Duration
    /// Most HTTP attempts per request (first one included) for 5xx and transport failures.
    /// Default 3.
    public var maximumAttempts: Int
    /// First retry delay after a 5xx or transport failure; doubled per retry. Default 200 ms.
    public var retryBaseDelay: Duration
    /// Largest retry delay. Default 2 s.
    public var retryMaximumDelay: Duration
    /// Most 429 answers one request waits out (each for its `X-Contentful-RateLimit-Reset`)
    /// before failing with ``ContentfulDeliveryError/rateLimited(resetSeconds:)``. Default 3.
    public var maximumRateLimitWaits: Int
    /// Largest accepted response body, in bytes. Default 20 MiB.
    public var maximumResponseBodyBytes: Int

    /// A configuration; each parameter sets the property of the same name (defaults as documented
    /// there). `spaceId` and `accessToken` are required.
    public init(
        spaceId: String,
        environment: String = "master",
        accessToken: String,
        api: API = .delivery,
        baseURL: String? = nil,
        locale: String? = nil,
        includeDepth: Int = 10,
        requestTimeout: Duration = .seconds(5),
        fetchDeadline: Duration = .seconds(15),
        maximumAttempts: Int = 3,
        retryBaseDelay: Duration = .milliseconds(200),
        retryMaximumDelay: Duration = .seconds(2),
        maximumRateLimitWaits: Int = 3,
        maximumResponseBodyBytes: Int = 20 << 20
    ) {
        self.spaceId = spaceId
        self.environment = environment
        self.accessToken = accessToken
        self.api = api
        self.baseURL = baseURL
        self.locale = locale
        self.includeDepth = includeDepth
        self.requestTimeout = requestTimeout
        self.fetchDeadline = fetchDeadline
        self.maximumAttempts = maximumAttempts
        self.retryBaseDelay = retryBaseDelay
        self.retryMaximumDelay = retryMaximumDelay
        self.maximumRateLimitWaits = maximumRateLimitWaits
        self.maximumResponseBodyBytes = maximumResponseBodyBytes
    }

    /// The base URL requests go to, without a trailing slash.
    public var effectiveBaseURL: String {
        var url = baseURL ?? api.defaultBaseURL
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }
}
