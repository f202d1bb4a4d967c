import OrderedCollections
import OptimizationJSON

/// Where the engine sends events: the Experience API (profiles, selections) and the Insights API
/// (views and clicks). Part of ``OptimizationConfig``; every field is optional.
///
/// When the client's `OptimizationClient/Environment/transport` is nil, `initialize` creates an
/// `HTTPFetchTransport` whose allow-list holds exactly the two base URLs below (or their
/// defaults), so the shared core can reach nothing else.
public struct OptimizationAPIConfig: Sendable, Equatable {
    /// The public Experience API.
    public static let defaultExperienceBaseURL = "https://experience.ninetailed.co/"
    /// The public Insights API.
    public static let defaultInsightsBaseURL = "https://ingest.insights.ninetailed.co/"

    /// Experience API base URL, with or without a trailing slash. Nil or empty: the default.
    public var experienceBaseURL: String?
    /// Insights API base URL, with or without a trailing slash. Nil or empty: the default.
    public var insightsBaseURL: String?
    /// `options.features` of Experience requests. Nil or empty: `["ip-enrichment", "location"]`.
    public var enabledFeatures: [String]?
    /// Adds `type=preflight` to Experience requests (the API evaluates without storing).
    public var preflight: Bool?
    /// Deadline of one request for the transport `initialize` creates (ignored for an injected
    /// transport). Nil: 3 s.
    public var requestTimeout: Duration?

    /// Creates an API configuration; every argument defaults to nil (the default in effect).
    /// - Parameters:
    ///   - experienceBaseURL: Experience API base URL; nil or empty uses ``defaultExperienceBaseURL``.
    ///   - insightsBaseURL: Insights API base URL; nil or empty uses ``defaultInsightsBaseURL``.
    ///   - enabledFeatures: `options.features` of Experience requests; nil or empty uses
    ///     `["ip-enrichment", "location"]`.
    ///   - preflight: true adds `type=preflight` to Experience requests (evaluated, not stored).
    ///   - requestTimeout: deadline of one request for the transport `initialize` creates; nil
    ///     uses 3 s.
    public init(
        experienceBaseURL: String? = nil, insightsBaseURL: String? = nil, enabledFeatures: [String]? = nil,
        preflight: Bool? = nil, requestTimeout: Duration? = nil
    ) {
        self.experienceBaseURL = experienceBaseURL
        self.insightsBaseURL = insightsBaseURL
        self.enabledFeatures = enabledFeatures
        self.preflight = preflight
        self.requestTimeout = requestTimeout
    }

    /// The Experience base URL in effect.
    public var effectiveExperienceBaseURL: String {
        experienceBaseURL.flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultExperienceBaseURL
    }

    /// The Insights base URL in effect.
    public var effectiveInsightsBaseURL: String {
        insightsBaseURL.flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultInsightsBaseURL
    }

    /// The bridge's `api` object (only the fields the core reads), or nil when none is set.
    package var bridgeValue: JSONValue? {
        var object: OrderedDictionary<String, JSONValue> = [:]
        if let experienceBaseURL, !experienceBaseURL.isEmpty { object["experienceBaseUrl"] = .string(experienceBaseURL) }
        if let insightsBaseURL, !insightsBaseURL.isEmpty { object["insightsBaseUrl"] = .string(insightsBaseURL) }
        if let enabledFeatures { object["enabledFeatures"] = .array(enabledFeatures.map(JSONValue.string)) }
        if let preflight { object["preflight"] = .bool(preflight) }
        return object.isEmpty ? nil : .object(object)
    }
}
