import OrderedCollections
import OptimizationJSON
import OptimizationContent

/// What a service knows about one incoming request before it calls the engine: the visitor's
/// consent, profile id, locale, and the context every event of the request carries
/// (``OptimizationService/forRequest(_:)``). Mirrors the `forRequest` options of Contentful's
/// server SDK.
///
/// **Bounds.** The free-form text comes from the visitor (`User-Agent`, the URL) and rides in
/// every event of the request, so in Insights requests shared with other visitors: ``locale``,
/// ``eventContext``, ``ip`` and ``requestId`` are bounded where they enter, in the initializer
/// and on every later assignment (`userAgent` 512 bytes, every other context
/// string 2,048 bytes, control characters removed, cut on a Unicode scalar boundary). The
/// profile id is an identifier, not free text, and is kept as it is.
public struct RequestOptions: Sendable, Equatable {
    /// The visitor's consent as the service recorded it (typically from its own consent cookie).
    public var consent: RequestConsent
    /// The visitor's profile id (typically from a cookie the service wrote because
    /// ``OptimizationRequest/canPersistProfile`` was true). Nil for a first visit.
    public var profileId: String?
    /// Locale for `context.locale` and the Experience API `?locale=` (`de_DE` becomes `de-DE`);
    /// nil uses the service configuration's locale. At most 64 bytes,
    /// control characters removed (bounded when set).
    public var locale: String? {
        didSet { locale = RequestTextBounds.bounded(locale, maxBytes: RequestTextBounds.localeBytes) }
    }
    /// Merged UNDER every event of this request (the call's own payload wins): `page`
    /// (`{url, path, …}`), `userAgent`, `campaign`, `location`, `locale`, `app`, `screen`.
    /// Bounded when set: `userAgent` at most 512 bytes,
    /// every other string (`page.url`, `page.path`, `page.search` …) at most 2,048 bytes, member
    /// names at most 256, control characters removed.
    public var eventContext: OrderedDictionary<String, JSONValue> {
        didSet { eventContext = RequestTextBounds.boundedContext(eventContext) }
    }
    /// The visitor's IP address, sent as `X-Force-IP` for IP enrichment. At most
    /// 64 bytes, control characters removed (bounded when set).
    public var ip: String? {
        didSet { ip = RequestTextBounds.bounded(ip, maxBytes: RequestTextBounds.ipBytes) }
    }
    /// Ask the Experience API to evaluate without storing anything.
    public var preflight: Bool
    /// Selections to render with until (or unless) an Experience call of this request succeeds,
    /// for example from a handoff cookie the service wrote on an earlier page. Nil: nothing
    /// selected (baselines).
    public var selectedOptimizations: SelectedOptimizations?
    /// Flag changes that go with ``selectedOptimizations``.
    public var changes: [JSONValue]?
    /// Latency budget of each Experience call of this request, at least 1 ms, on the service
    /// clock; nil uses ``OptimizationService/Options/experienceTimeout``. When it
    /// runs out the call returns `EventOutcome.timedOut(after:)` and its HTTP
    /// request is cancelled (the connection closed), whatever the transport's own deadline.
    public var experienceTimeout: Duration?
    /// The service's id for this request: added as `request-id` metadata to every line logged
    /// for it (never the profile). At most 128 bytes, control
    /// characters removed (bounded when set).
    public var requestId: String? {
        didSet { requestId = RequestTextBounds.bounded(requestId, maxBytes: RequestTextBounds.requestIdBytes) }
    }

    /// Creates the options of one request; every argument has a default.
    /// - Parameters:
    ///   - consent: the visitor's consent; default ``RequestConsent/unset`` (nothing decided).
    ///   - profileId: the visitor's profile id; nil (the default) for a first visit.
    ///   - locale: locale of the request's events and Experience calls; nil uses the service
    ///     configuration's locale. Bounded (see ``locale``).
    ///   - eventContext: context merged under every event of this request; default empty.
    ///     Bounded (see ``eventContext``).
    ///   - ip: the visitor's IP address, sent as `X-Force-IP`; nil sends none. Bounded (see
    ///     ``ip``).
    ///   - preflight: true asks the Experience API to evaluate without storing; default false.
    ///   - selectedOptimizations: selections to render with until an Experience call succeeds;
    ///     nil (the default) means nothing selected.
    ///   - changes: flag changes that go with `selectedOptimizations`.
    ///   - experienceTimeout: latency budget of each Experience call; nil uses
    ///     ``OptimizationService/Options/experienceTimeout``.
    ///   - requestId: the service's id for this request, added as `request-id` log metadata.
    ///     Bounded (see ``requestId``).
    public init(
        consent: RequestConsent = .unset,
        profileId: String? = nil,
        locale: String? = nil,
        eventContext: OrderedDictionary<String, JSONValue> = [:],
        ip: String? = nil,
        preflight: Bool = false,
        selectedOptimizations: SelectedOptimizations? = nil,
        changes: [JSONValue]? = nil,
        experienceTimeout: Duration? = nil,
        requestId: String? = nil
    ) {
        self.consent = consent
        self.profileId = profileId
        self.locale = RequestTextBounds.bounded(locale, maxBytes: RequestTextBounds.localeBytes)
        self.eventContext = RequestTextBounds.boundedContext(eventContext)
        self.ip = RequestTextBounds.bounded(ip, maxBytes: RequestTextBounds.ipBytes)
        self.preflight = preflight
        self.selectedOptimizations = selectedOptimizations
        self.changes = changes
        self.experienceTimeout = experienceTimeout
        self.requestId = RequestTextBounds.bounded(requestId, maxBytes: RequestTextBounds.requestIdBytes)
    }
}

/// A visitor's consent for one request: event consent (which events may leave) and persistence
/// consent (whether the service may store the profile id), each true, false or undecided (nil).
/// Only `events == true` unlocks every event; false and undecided allow the service allow-list
/// alone.
public struct RequestConsent: Sendable, Equatable, ExpressibleByBooleanLiteral {
    /// Event consent: true allows every event; false or nil (undecided) allows only the
    /// service's allow-list.
    public var events: Bool?
    /// Persistence consent: only true lets the service store the profile id
    /// (``OptimizationRequest/canPersistProfile``).
    public var persistence: Bool?

    /// Creates a consent; both default to nil (undecided).
    /// - Parameters:
    ///   - events: event consent.
    ///   - persistence: persistence consent.
    public init(events: Bool? = nil, persistence: Bool? = nil) {
        self.events = events
        self.persistence = persistence
    }

    /// A boolean sets both consents, as in the reference.
    public init(booleanLiteral value: Bool) {
        self.init(events: value, persistence: value)
    }

    /// Nothing decided yet.
    public static let unset = RequestConsent()
}
