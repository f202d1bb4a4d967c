import OptimizationJSON
import OrderedCollections

/// The entry to render for a visitor, and why.
public struct ResolvedOptimizedEntry: Sendable, Equatable {
    /// The baseline or the variant entry. For collection input its entry links are resolved from
    /// the includes (a cycle stays a link). Values are the caller's own, exactly as given.
    public let entry: JSONValue
    /// The selection that matched one of the entry's experiences, once one matched (also when the
    /// baseline is rendered: variant index 0, out of range, or an unresolvable variant).
    public let selectedOptimization: JSONValue?
    /// Identifies this resolution for view and click events; nil when nothing matched or
    /// before `initialize`.
    public let optimizationContextId: String?
    /// True only when the selected variant is the empty variant: render nothing, but still track
    /// the view (against the baseline).
    public let isEmptyVariant: Bool

    /// A result with the given parts; the engine builds these, tests and custom resolvers may too.
    public init(entry: JSONValue, selectedOptimization: JSONValue? = nil, optimizationContextId: String? = nil, isEmptyVariant: Bool = false) {
        self.entry = entry
        self.selectedOptimization = selectedOptimization
        self.optimizationContextId = optimizationContextId
        self.isEmptyVariant = isEmptyVariant
    }

    /// `sys.id` of ``entry``.
    public var entryId: String? { entry["sys"]?["id"]?.stringValue }

    /// `{"entry": …, "selectedOptimization": …, "isEmptyVariant": true}`, the last two only
    /// when present, as printed by `optimization resolve`.
    public var jsonValue: JSONValue {
        var object: OrderedDictionary<String, JSONValue> = ["entry": entry]
        if let selectedOptimization { object["selectedOptimization"] = selectedOptimization }
        if isEmptyVariant { object["isEmptyVariant"] = true }
        return .object(object)
    }
}
