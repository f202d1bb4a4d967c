/// What survives a restart. Consent is always persisted; the profile continuity fields only
/// while persistence consent is `true`.
public struct PersistedState: Sendable, Equatable {
    /// Event consent (`accepted` / `denied` on disk; nil = never decided).
    public var consent: Bool?
    /// Persistence consent (`accepted` / `denied` on disk; nil = never decided).
    public var persistenceConsent: Bool?
    /// Profile continuity: the visitor's profile, changes (flags), selected optimizations and the
    /// anonymous id used to continue the profile with the Experience API.
    public var profile: JSONValue?
    public var changes: JSONValue?
    public var selectedOptimizations: JSONValue?
    public var anonymousId: String?

    public init(
        consent: Bool? = nil, persistenceConsent: Bool? = nil, profile: JSONValue? = nil, changes: JSONValue? = nil,
        selectedOptimizations: JSONValue? = nil, anonymousId: String? = nil
    ) {
        self.consent = consent
        self.persistenceConsent = persistenceConsent
        self.profile = profile
        self.changes = changes
        self.selectedOptimizations = selectedOptimizations
        self.anonymousId = anonymousId
    }

    /// True when any profile continuity field is set.
    public var hasProfileContinuity: Bool {
        profile != nil || changes != nil || selectedOptimizations != nil || anonymousId != nil
    }

    /// This state without the profile continuity fields.
    public var consentOnly: PersistedState {
        PersistedState(consent: consent, persistenceConsent: persistenceConsent)
    }
}

/// Durable storage of consent and profile continuity. Implement it to keep the state somewhere
/// else (a database, a secrets store); ``FileOptimizationStore`` is the default.
///
/// Contract: called from any thread; `load` never fails (unreadable or corrupt data is reported
/// through the implementation's logger and treated as absent); `save` replaces the whole state
/// (nil fields are removed); a failed save is reported, not thrown, so persistence problems
/// never break event handling.
public protocol OptimizationStore: Sendable {
    func load() -> PersistedState
    func save(_ state: PersistedState)
}

/// Consent encoding on disk (spec: ConsentStorage).
enum ConsentEncoding {
    static func encode(_ value: Bool?) -> String? {
        value.map { $0 ? "accepted" : "denied" }
    }

    static func decode(_ text: String?) -> Bool? {
        switch text {
        case "accepted": return true
        case "denied": return false
        default: return nil
        }
    }
}
