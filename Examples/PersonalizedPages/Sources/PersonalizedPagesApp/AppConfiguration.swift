import Foundation
import Optimization

/// Everything the personalized-pages service is configured with (flags and environment of the
/// `personalized-pages` executable, or a test). A value type: build it, then hand it to
/// ``PersonalizedPagesApp``.
public struct AppConfiguration: Sendable, Equatable {
    /// Address to bind. Loopback by default.
    public var host: String
    /// TCP port; 0 binds an ephemeral port (the bound one is reported through `onListening`).
    public var port: Int
    /// Address the metrics listener binds (`GET /metrics`, off the public listener). Loopback by
    /// default.
    public var metricsHost: String
    /// TCP port of the metrics listener; 0 binds an ephemeral port (reported through
    /// `onMetricsListening`). Nil: no metrics listener, `/metrics` is served nowhere.
    public var metricsPort: Int?
    /// Optimization client id (Contentful space's optimization client).
    public var clientId: String
    /// Optimization environment.
    public var environment: String
    /// Experience API base URL; nil uses the library default (the real API).
    public var experienceBaseURL: String?
    /// Insights API base URL; nil uses the library default (the real API).
    public var insightsBaseURL: String?
    /// Engines in the pool; nil means one per core.
    public var engines: Int?
    /// Latency budget of each `page()` Experience call.
    public var experienceTimeout: Duration
    /// Folder holding the repository's `Fixtures/` (the page's entries are read from
    /// `entries/` inside it).
    public var fixturesDirectory: URL
    /// How long graceful shutdown may spend flushing queued events.
    public var shutdownFlushTimeout: Duration
    /// Live entries for `GET /cms/{id}` and the Contentful webhook route; nil: those routes are
    /// not served.
    public var contentful: ContentfulSettings?
    /// A PostgreSQL connection string shared by the service's replicas: accepted Insights events
    /// are stored in its shared outbox (any replica delivers them), and with ``contentful`` the
    /// live entries are read through and written back to its entry store and invalidations reach
    /// every replica. Nil: each replica keeps its events in memory and its own cache only.
    public var postgresURL: String?
    /// How long a replica's claim on shared-outbox events lasts without renewal: after a replica
    /// died, the others deliver its events once this has passed. Renewed every third of it.
    public var sharedOutboxLease: Duration
    /// The keys that sign the visitor-state cookie and replay tickets, base64 (at least 32 bytes
    /// each; `openssl rand -base64 32`): the first signs, all verify (rotation: list the new key
    /// first and drop the old one a year later, the state's lifetime). Replicas serving the same
    /// visitors need the same keys. Empty: a random key per process, so state and tickets do not
    /// survive a restart and are not shared with other replicas (the app logs a notice).
    public var visitorStateKeys: [String]
    /// Whether cookies carry `Secure` (sent over HTTPS only). Default true; false only for
    /// plain-HTTP development.
    public var secureCookies: Bool
    /// How long a `/first` page's replay ticket may be committed (and how long its id is kept
    /// in the single-use record).
    public var replayTicketLifetime: Duration
    /// The bearer tokens and API keys OpenFeature clients present to the OFREP routes
    /// (`POST /ofrep/v1/evaluate/flags[/{key}]`). Empty: the routes are not mounted.
    public var ofrepCredentials: [OFREPConfiguration.Credential]
    /// False (default): an OFREP request's `targetingKey` must be a sealed targeting token the
    /// app issued for its visitor (signed with ``visitorStateKeys``, valid for a day; see
    /// `PersonalizedPagesApp.ofrepTargetingTokens`). True: it is a profile id trusted as it is,
    /// only for deployments where every OFREP credential holder is one of the operator's servers.
    public var ofrepTrustsProfileIds: Bool
    /// True: nothing is sent before the visitor consents (the service's pre-consent allow-list is
    /// empty, so not even the `page` event leaves). False (default): the service's default
    /// allow-list (`identify`, `page`) lets the page view be counted before consent.
    public var strictConsent: Bool
    /// How long a connection of either listener (the public one and the metrics one) may stay
    /// open without progress before the server closes it. Progress is a complete request head or
    /// body chunk read, or a response finished; the time counts from the connection's start. So
    /// it closes connections that send nothing, half a request line, or headers a byte at a time
    /// (slowloris: a head not complete within this time), and idle keep-alive connections; a
    /// request being answered is never cut. Positive; default 30 s.
    public var idleTimeout: Duration

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        metricsHost: String = "127.0.0.1",
        metricsPort: Int? = nil,
        clientId: String = "personalized-pages",
        environment: String = "main",
        experienceBaseURL: String? = nil,
        insightsBaseURL: String? = nil,
        engines: Int? = nil,
        experienceTimeout: Duration = .milliseconds(800),
        fixturesDirectory: URL = AppConfiguration.defaultFixturesDirectory,
        shutdownFlushTimeout: Duration = .seconds(10),
        contentful: ContentfulSettings? = nil,
        postgresURL: String? = nil,
        sharedOutboxLease: Duration = .seconds(30),
        visitorStateKeys: [String] = [],
        secureCookies: Bool = true,
        replayTicketLifetime: Duration = .seconds(600),
        ofrepCredentials: [OFREPConfiguration.Credential] = [],
        ofrepTrustsProfileIds: Bool = false,
        strictConsent: Bool = false,
        idleTimeout: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.metricsHost = metricsHost
        self.metricsPort = metricsPort
        self.clientId = clientId
        self.environment = environment
        self.experienceBaseURL = experienceBaseURL
        self.insightsBaseURL = insightsBaseURL
        self.engines = engines
        self.experienceTimeout = experienceTimeout
        self.fixturesDirectory = fixturesDirectory
        self.shutdownFlushTimeout = shutdownFlushTimeout
        self.contentful = contentful
        self.postgresURL = postgresURL
        self.sharedOutboxLease = sharedOutboxLease
        self.visitorStateKeys = visitorStateKeys
        self.secureCookies = secureCookies
        self.replayTicketLifetime = replayTicketLifetime
        self.ofrepCredentials = ofrepCredentials
        self.ofrepTrustsProfileIds = ofrepTrustsProfileIds
        self.strictConsent = strictConsent
        self.idleTimeout = idleTimeout
    }

    /// The repository's `Fixtures/`, found relative to this source file
    /// (`Examples/PersonalizedPages/Sources/PersonalizedPagesApp/` → `../../../../Fixtures`), so
    /// it is right when the example runs from its place in a clone.
    public static var defaultFixturesDirectory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // PersonalizedPagesApp
            .deletingLastPathComponent()  // Sources
            .deletingLastPathComponent()  // PersonalizedPages
            .deletingLastPathComponent()  // Examples
            .deletingLastPathComponent()  // repository root
            .appendingPathComponent("Fixtures", isDirectory: true)
    }
}
