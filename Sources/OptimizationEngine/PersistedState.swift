import OptimizationJSON

/// What survives a restart. Consent is always persisted; the profile continuity fields only
/// while persistence consent is `true`.
public struct PersistedState: Sendable, Equatable {
    /// Event consent (`accepted` / `denied` on disk; nil = never decided).
    public var consent: Bool?
    /// Persistence consent (`accepted` / `denied` on disk; nil = never decided).
    public var persistenceConsent: Bool?
    /// Profile continuity: the visitor's profile object.
    public var profile: JSONValue?
    /// Profile continuity: the visitor's Experience API changes (flag values), an array.
    public var changes: JSONValue?
    /// Profile continuity: the visitor's selected optimizations, an array.
    public var selectedOptimizations: JSONValue?
    /// Profile continuity: the anonymous id used to continue the profile with the Experience API
    /// (it follows the profile's id).
    public var anonymousId: String?

    /// Creates a state; every field defaults to nil (nothing persisted).
    /// - Parameters:
    ///   - consent: event consent; nil means never decided.
    ///   - persistenceConsent: persistence consent; nil means never decided.
    ///   - profile: the visitor's profile object.
    ///   - changes: the visitor's changes (flag values), an array.
    ///   - selectedOptimizations: the visitor's selected optimizations, an array.
    ///   - anonymousId: the anonymous id used to continue the profile.
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
/// else (a database, a secrets store); `FileOptimizationStore` is the default.
///
/// Contract: called from any thread; `load` never fails (unreadable or corrupt data is reported
/// through the implementation's logger and treated as absent); `save` replaces the whole state
/// (nil fields are removed); a failed save is reported, not thrown, so persistence problems
/// never break event handling.
public protocol OptimizationStore: Sendable {
    /// Returns the saved state, or an empty ``PersistedState`` when nothing is saved; called when
    /// a client is initialized. Must not fail: unreadable or corrupt data is reported by the
    /// implementation and treated as absent.
    func load() -> PersistedState
    /// Replaces the whole saved state with `state` (nil fields are removed). Called from
    /// whichever thread runs the engine, only when the state changed; a failure is reported by
    /// the implementation, never thrown.
    func save(_ state: PersistedState)
}

/// Consent encoding on disk (spec: ConsentStorage).
package enum ConsentEncoding {
    package static func encode(_ value: Bool?) -> String? {
        value.map { $0 ? "accepted" : "denied" }
    }

    package static func decode(_ text: String?) -> Bool? {
        switch text {
        case "accepted": return true
        case "denied": return false
        default: return nil
        }
    }
}
