import OptimizationJSON

/// A snapshot of the engine's state, as the shared core last pushed it
/// (`__nativeOnStateChange`, the bridge state).
///
/// Read it through `OptimizationClient/state`; it is a value, safe to keep and to pass across
/// threads. Before `initialize` and after `destroy()` the client reports ``empty``.
public struct OptimizationState: Sendable, Equatable {
    /// The visitor's profile, once the Experience API returned one (or from configured defaults).
    public internal(set) var profile: JSONValue?
    /// Event consent: `true`, `false`, or nil while the visitor has not decided. Only `true`
    /// unlocks event types outside the pre-consent allow-list.
    public internal(set) var consent: Bool?
    /// Persistence consent (may profile continuity be stored durably): `true`, `false`, or nil.
    public internal(set) var persistenceConsent: Bool?
    /// True when selected optimizations are known (an empty list counts).
    public internal(set) var canOptimize: Bool
    /// True when consent is `true` or the allow-list contains any of `identify`, `page`,
    /// `screen`, `track`, `group`, `alias`, `component`.
    public internal(set) var optimizationPossible: Bool
    /// `{"status": "idle" | "pending" | "success" | "failed", "reason"?: "timeout" | "api-error"}`.
    public internal(set) var experienceRequestState: JSONValue
    /// The Experience API changes (custom flag sources), when known.
    public internal(set) var changes: JSONValue?
    /// The visitor's selected optimizations, when known.
    public internal(set) var selectedOptimizations: JSONValue?
    /// The normalized SDK locale, if one is set.
    public internal(set) var locale: String?

    /// The state of a client that is not initialized: nothing known, nothing possible.
    public static let empty = OptimizationState(
        profile: nil, consent: nil, persistenceConsent: nil, canOptimize: false, optimizationPossible: false,
        experienceRequestState: ["status": "idle"], changes: nil, selectedOptimizations: nil, locale: nil)

    package init(
        profile: JSONValue?, consent: Bool?, persistenceConsent: Bool?, canOptimize: Bool, optimizationPossible: Bool,
        experienceRequestState: JSONValue, changes: JSONValue?, selectedOptimizations: JSONValue?, locale: String?
    ) {
        self.profile = profile
        self.consent = consent
        self.persistenceConsent = persistenceConsent
        self.canOptimize = canOptimize
        self.optimizationPossible = optimizationPossible
        self.experienceRequestState = experienceRequestState
        self.changes = changes
        self.selectedOptimizations = selectedOptimizations
        self.locale = locale
    }

    /// Reads a BridgeState JSON object; `null` and missing keys become nil.
    package init(bridgeState value: JSONValue) {
        func present(_ key: String) -> JSONValue? {
            guard let member = value[key], !member.isNull else { return nil }
            return member
        }
        self.init(
            profile: present("profile"),
            consent: value["consent"]?.boolValue,
            persistenceConsent: value["persistenceConsent"]?.boolValue,
            canOptimize: value["canOptimize"]?.boolValue ?? false,
            optimizationPossible: value["optimizationPossible"]?.boolValue ?? false,
            experienceRequestState: present("experienceRequestState") ?? ["status": "idle"],
            changes: present("changes"),
            selectedOptimizations: present("selectedOptimizations"),
            locale: value["locale"]?.stringValue)
    }
}
