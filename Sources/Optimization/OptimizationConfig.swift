import OrderedCollections

/// How an ``OptimizationClient`` talks to Contentful's optimization APIs and gates events.
public struct OptimizationConfig: Sendable, Equatable {
    /// The Contentful optimization client id (the organization in API paths). Required.
    public var clientId: String
    /// The Contentful environment. Default `"main"`.
    public var environment: String
    /// Default locale for events and Experience requests (`de_DE` is normalised to `de-DE`);
    /// nil uses `en-US` for events. Invalid values make `initialize` throw.
    public var locale: String?
    /// Event types allowed before the visitor consents; `[]` means strict opt-in. Nil means the
    /// face's own default, which differs by design: ``OptimizationClient/defaultAllowedEventTypes``
    /// for a screen-based host, ``OptimizationService/defaultAllowedEventTypes`` for a page-based
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

    /// Creates a configuration; only `clientId` is required.
    /// - Parameters:
    ///   - clientId: the Contentful optimization client id; must not be empty (starting a client
    ///     or service throws `OptimizationError/configError(_:)` otherwise).
    ///   - environment: the Contentful environment; default `"main"`.
    ///   - locale: default locale for events and Experience requests; nil uses `en-US` for events.
    ///   - allowedEventTypes: event types allowed before consent, `[]` strict opt-in; nil means
    ///     the face's default (``OptimizationClient/defaultAllowedEventTypes`` or
    ///     ``OptimizationService/defaultAllowedEventTypes``).
    ///   - channel: `channel` stamped on every event; default `"server"`.
    ///   - logLevel: threshold of the shared core's logging; default ``OptimizationLogLevel/error``.
    ///   - entryCacheSize: distinct entries (and selection sets) one engine keeps parsed; default 1000.
    ///   - defaults: initial consent and state; nil means consent undecided, nothing known.
    ///   - api: API base URLs and request options; nil uses the public APIs.
    ///   - queuePolicy: delivery queue settings and callbacks; nil uses the defaults.
    public init(
        clientId: String,
        environment: String = "main",
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

    /// The object handed to `__bridge.initialize`.
    var bridgeConfiguration: JSONValue {
        var object: OrderedDictionary<String, JSONValue> = [
            "clientId": .string(clientId),
            "environment": .string(environment),
            "logLevel": .string(logLevel.rawValue),
            "channel": .string(channel),
            "library": ["name": .string(OptimizationLibrary.name), "version": .string(OptimizationLibrary.version)],
            "entryCacheSize": .number(JSONNumber(max(1, entryCacheSize))),
        ]
        if let locale { object["locale"] = .string(locale) }
        object["allowedEventTypes"] = .array((allowedEventTypes ?? OptimizationClient.defaultAllowedEventTypes).map(JSONValue.string))
        if let defaults { object["defaults"] = defaults.bridgeValue }
        if let api = api?.bridgeValue { object["api"] = api }
        if let queuePolicy = queuePolicy?.bridgeValue { object["queuePolicy"] = queuePolicy }
        return .object(object)
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

