import OptimizationDelivery
import Logging
import OrderedCollections
import OptimizationJSON
import OptimizationTransport

/// How an `OptimizationClient` talks to Contentful's optimization APIs and gates events.
public struct OptimizationConfig: Sendable, Equatable {
    /// The tenant in API paths: the Contentful space id (API v2, ``spaceId``) or the
    /// optimization client id (API v1). Required.
    public var clientId: String
    /// The protocol the engine speaks: ``OptimizationAPIVersion/v2`` for a configuration made
    /// with a space id, ``OptimizationAPIVersion/v1`` for one made with a client id, unless
    /// given.
    public var apiVersion: OptimizationAPIVersion
    /// The Contentful environment. Nil: the API version's default (`main` for v1, `master` for
    /// v2), and starting a client or service logs a warning once, because a configuration that
    /// moves from v1 to v2 without one silently changes environment.
    public var environment: String?
    /// Default locale for events and Experience requests (`de_DE` is normalised to `de-DE`);
    /// nil uses `en-US` for events. Invalid values make `initialize` throw.
    public var locale: String?
    /// Event types allowed before the visitor consents; `[]` means strict opt-in. Nil means the
    /// face's own default, which differs by design: `OptimizationClient/defaultAllowedEventTypes`
    /// for a screen-based host, `OptimizationService/defaultAllowedEventTypes` for a page-based
    /// server.
    public var allowedEventTypes: [String]?
    /// `channel` stamped on every event. Default `"server"`.
    public var channel: String
    /// Threshold for the shared core's own logging (everything goes to the client's `Logger`).
    public var logLevel: OptimizationLogLevel
    /// How many distinct entries (and selection sets) one engine keeps parsed. Default 1000.
    public var entryCacheSize: Int
    /// Initial consent and state (for example restored from a previous session). Nil: consent
    /// undecided, nothing known.
    public var defaults: StorageDefaults?
    /// Experience and Insights API base URLs and request options. Nil: the public APIs.
    public var api: OptimizationAPIConfig?
    /// Delivery queue capacity, retry/backoff/circuit settings and callbacks. Nil: the defaults.
    public var queuePolicy: QueuePolicy?

    /// Creates a configuration for API v1 (deprecated; use ``init(spaceId:environment:apiVersion:locale:allowedEventTypes:channel:logLevel:entryCacheSize:defaults:api:queuePolicy:)``).
    /// - Parameters:
    ///   - clientId: the Contentful optimization client id; must not be empty (starting a client
    ///     or service throws `OptimizationError/configError(_:)` otherwise).
    ///   - environment: the Contentful environment; nil uses the API version's default (`main`
    ///     for v1) and logs a warning once at start.
    ///   - apiVersion: the protocol; default ``OptimizationAPIVersion/v1``.
    ///   - locale: default locale for events and Experience requests; nil uses `en-US` for events.
    ///   - allowedEventTypes: event types allowed before consent, `[]` strict opt-in; nil means
    ///     the face's default (`OptimizationClient/defaultAllowedEventTypes` or
    ///     `OptimizationService/defaultAllowedEventTypes`).
    ///   - channel: `channel` stamped on every event; default `"server"`.
    ///   - logLevel: threshold of the shared core's logging; default ``OptimizationLogLevel/error``.
    ///   - entryCacheSize: distinct entries (and selection sets) one engine keeps parsed; default 1000.
    ///   - defaults: initial consent and state; nil means consent undecided, nothing known.
    ///   - api: API base URLs and request options; nil uses the public APIs.
    ///   - queuePolicy: delivery queue settings and callbacks; nil uses the defaults.
    public init(
        clientId: String,
        environment: String? = nil,
        apiVersion: OptimizationAPIVersion = .v1,
        locale: String? = nil,
        allowedEventTypes: [String]? = nil,
        channel: String = "server",
        logLevel: OptimizationLogLevel = .error,
        entryCacheSize: Int = 1000,
        defaults: StorageDefaults? = nil,
        api: OptimizationAPIConfig? = nil,
        queuePolicy: QueuePolicy? = nil
    ) {
        self.clientId = clientId
        self.apiVersion = apiVersion
        self.environment = environment
        self.locale = locale
        self.allowedEventTypes = allowedEventTypes
        self.channel = channel
        self.logLevel = logLevel
        self.entryCacheSize = entryCacheSize
        self.defaults = defaults
        self.api = api
        self.queuePolicy = queuePolicy
    }

    /// Creates a configuration for API v2; only `spaceId` is required.
    /// - Parameters:
    ///   - spaceId: the Contentful space id; must not be empty (starting a client or service
    ///     throws `OptimizationError/configError(_:)` otherwise).
    ///   - environment: the Contentful environment; nil uses the API version's default
    ///     (`master` for v2) and logs a warning once at start.
    ///   - apiVersion: the protocol; default ``OptimizationAPIVersion/v2``.
    ///   - locale: default locale for events and Experience requests; nil uses `en-US` for events.
    ///   - allowedEventTypes: event types allowed before consent, `[]` strict opt-in; nil means
    ///     the face's default.
    ///   - channel: `channel` stamped on every event; default `"server"`.
    ///   - logLevel: threshold of the shared core's logging; default ``OptimizationLogLevel/error``.
    ///   - entryCacheSize: distinct entries (and selection sets) one engine keeps parsed; default 1000.
    ///   - defaults: initial consent and state; nil means consent undecided, nothing known.
    ///   - api: API base URLs and request options; nil uses the public APIs.
    ///   - queuePolicy: delivery queue settings and callbacks; nil uses the defaults.
    public init(
        spaceId: String, environment: String? = nil, apiVersion: OptimizationAPIVersion = .v2, locale: String? = nil,
        allowedEventTypes: [String]? = nil, channel: String = "server", logLevel: OptimizationLogLevel = .error,
        entryCacheSize: Int = 1000, defaults: StorageDefaults? = nil, api: OptimizationAPIConfig? = nil, queuePolicy: QueuePolicy? = nil
    ) {
        self.init(
            clientId: spaceId, environment: environment, apiVersion: apiVersion, locale: locale, allowedEventTypes: allowedEventTypes,
            channel: channel, logLevel: logLevel, entryCacheSize: entryCacheSize, defaults: defaults, api: api, queuePolicy: queuePolicy)
    }

    /// The Contentful space id: the tenant of API v2 (the same value as ``clientId``).
    public var spaceId: String {
        get { clientId }
        set { clientId = newValue }
    }

    /// The tenant keys every engine configuration carries: `clientId`, `apiVersion` and, when
    /// set, `environment` (the shared core applies the version's default otherwise).
    package var tenantMembers: OrderedDictionary<String, JSONValue> {
        var members: OrderedDictionary<String, JSONValue> = ["clientId": .string(clientId), "apiVersion": .string(apiVersion.rawValue)]
        if let environment, !environment.isEmpty { members["environment"] = .string(environment) }
        return members
    }

    /// Logs, once per call, that no environment is configured (the version's default applies).
    package func warnWhenEnvironmentIsUnset(_ logger: Logger) {
        guard environment?.isEmpty ?? true else { return }
        logger.warning("no Contentful environment configured: the API version's default applies; set OptimizationConfig.environment", metadata: [
            "apiVersion": "\(apiVersion.rawValue)", "environment": "\(apiVersion.defaultEnvironment)",
        ])
    }

    /// Where Insights events are sent (the client's and the service's queues).
    package var insightsEventsURL: String {
        InsightsEndpoint.eventsURL(
            baseURL: (api ?? OptimizationAPIConfig()).effectiveInsightsBaseURL, apiVersion: apiVersion.rawValue, tenantId: clientId,
            environment: environment ?? "")
    }
}

/// The protocol of Contentful's optimization APIs the engine speaks.
public enum OptimizationAPIVersion: String, Sendable, CaseIterable {
    /// API v1 (deprecated, still served): the tenant is the optimization client id; Experience
    /// API `v2/organizations/{id}/environments/{env}/…`, Insights API
    /// `v1/organizations/{id}/environments/{env}/events`; default environment `main`.
    case v1
    /// API v2: the tenant is the space id; Experience API `v3/spaces/{id}/environments/{env}/…`,
    /// Insights API `v2/spaces/{id}/environments/{env}/events`; default environment `master`;
    /// error answers carry an API error code.
    case v2

    /// The environment a configuration without one uses: `main` (v1) or `master` (v2).
    public var defaultEnvironment: String {
        switch self {
        case .v1: "main"
        case .v2: "master"
        }
    }
}

/// Severity threshold of the shared core's logging (`fatal` highest).
public enum OptimizationLogLevel: String, Sendable, CaseIterable {
    /// Only fatal messages (forwarded to the `Logger` at `error`).
    case fatal
    /// Errors and fatal messages. The default.
    case error
    /// Warnings and above.
    case warn
    /// Informational messages and above.
    case info
    /// Debug messages and above.
    case debug
    /// Everything, including the core's plain `log` output (the most verbose).
    case log
}

