import OrderedCollections
import OptimizationJSON

/// Initial values for a client's state, handed to the engine at `initialize`.
///
/// Event consent starts as ``consent``; persistence consent as ``persistenceConsent`` ??
/// ``consent``. `profile`, `changes` and `selectedOptimizations` seed the corresponding state
/// (for example from a previous session). Every field is optional; nil means "not known".
public struct StorageDefaults: Sendable, Equatable {
    /// Initial event consent: `true`, `false`, or nil (not decided).
    public var consent: Bool?
    /// Initial persistence consent; nil falls back to ``consent``.
    public var persistenceConsent: Bool?
    /// A profile object (`{"id": …, …}`).
    public var profile: JSONValue?
    /// An array of Experience API changes.
    public var changes: JSONValue?
    /// An array of selected optimizations.
    public var selectedOptimizations: JSONValue?

    /// Creates defaults; every argument defaults to nil (not known).
    /// - Parameters:
    ///   - consent: initial event consent; nil means not decided.
    ///   - persistenceConsent: initial persistence consent; nil falls back to `consent`.
    ///   - profile: a profile object (`{"id": …, …}`).
    ///   - changes: an array of Experience API changes.
    ///   - selectedOptimizations: an array of selected optimizations.
    public init(
        consent: Bool? = nil, persistenceConsent: Bool? = nil, profile: JSONValue? = nil, changes: JSONValue? = nil,
        selectedOptimizations: JSONValue? = nil
    ) {
        self.consent = consent
        self.persistenceConsent = persistenceConsent
        self.profile = profile
        self.changes = changes
        self.selectedOptimizations = selectedOptimizations
    }

    /// The `defaults` object of the bridge configuration: only the fields that are set, with the
    /// wire key `selectedOptimizations` (never the legacy `optimizations`).
    package var bridgeValue: JSONValue {
        var object: OrderedDictionary<String, JSONValue> = [:]
        if let consent { object["consent"] = .bool(consent) }
        if let persistenceConsent { object["persistenceConsent"] = .bool(persistenceConsent) }
        if let profile { object["profile"] = profile }
        if let changes { object["changes"] = changes }
        if let selectedOptimizations { object["selectedOptimizations"] = selectedOptimizations }
        return .object(object)
    }
}
