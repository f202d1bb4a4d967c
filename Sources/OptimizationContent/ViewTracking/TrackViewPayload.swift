import OptimizationJSON
import OrderedCollections

/// An entry view (Insights `component` event; also sent to the Experience API when sticky).
public struct TrackViewPayload: Sendable, Equatable {
    /// `sys.id` of the baseline entry.
    public var componentId: String
    /// Identifies one visibility cycle; every event of the cycle shares it.
    public var viewId: String
    /// The matched experience, if any.
    public var experienceId: String?
    /// Identifies the resolution the entry was rendered from, if any.
    public var optimizationContextId: String?
    /// The rendered variant: 0 for the baseline.
    public var variantIndex: Int
    /// How long the entry has been visible in this cycle (sent in whole milliseconds).
    public var viewDuration: Duration
    /// Whether the matched experience is sticky; nil when unknown. A sticky view (`true`) is also
    /// sent to the Experience API.
    public var sticky: Bool?
    /// De-duplicates sticky views across cycles (defaults to `viewId` in the core).
    public var stickyTrackingKey: String?

    /// Creates a view payload.
    /// - Parameters:
    ///   - componentId: `sys.id` of the baseline entry.
    ///   - viewId: identifies the visibility cycle.
    ///   - experienceId: the matched experience; none by default.
    ///   - optimizationContextId: the resolution the entry was rendered from; none by default.
    ///   - variantIndex: the rendered variant; default 0 (the baseline).
    ///   - viewDuration: how long the entry has been visible in this cycle (sent in whole
    ///     milliseconds).
    ///   - sticky: whether the matched experience is sticky; nil (unknown) by default.
    ///   - stickyTrackingKey: de-duplicates sticky views across cycles; nil by default.
    public init(
        componentId: String, viewId: String, experienceId: String? = nil, optimizationContextId: String? = nil,
        variantIndex: Int = 0, viewDuration: Duration, sticky: Bool? = nil, stickyTrackingKey: String? = nil
    ) {
        self.componentId = componentId
        self.viewId = viewId
        self.experienceId = experienceId
        self.optimizationContextId = optimizationContextId
        self.variantIndex = variantIndex
        self.viewDuration = viewDuration
        self.sticky = sticky
        self.stickyTrackingKey = stickyTrackingKey
    }

    /// The bridge payload: the four required keys always, optionals only when set.
    public var jsonValue: JSONValue {
        var object: OrderedDictionary<String, JSONValue> = [
            "componentId": .string(componentId), "viewId": .string(viewId),
            "variantIndex": .number(JSONNumber(variantIndex)), "viewDurationMs": .number(JSONNumber(viewDuration.wholeMilliseconds)),
        ]
        if let experienceId { object["experienceId"] = .string(experienceId) }
        if let optimizationContextId { object["optimizationContextId"] = .string(optimizationContextId) }
        if let sticky { object["sticky"] = .bool(sticky) }
        if let stickyTrackingKey { object["stickyTrackingKey"] = .string(stickyTrackingKey) }
        return .object(object)
    }
}

/// A click on an entry (Insights `component_click` event).
public struct TrackClickPayload: Sendable, Equatable {
    /// `sys.id` of the baseline entry.
    public var componentId: String
    /// The matched experience, if any.
    public var experienceId: String?
    /// Identifies the resolution the entry was rendered from, if any.
    public var optimizationContextId: String?
    /// The rendered variant: 0 for the baseline.
    public var variantIndex: Int

    /// Creates a click payload.
    /// - Parameters:
    ///   - componentId: `sys.id` of the baseline entry.
    ///   - experienceId: the matched experience; none by default.
    ///   - optimizationContextId: the resolution the entry was rendered from; none by default.
    ///   - variantIndex: the rendered variant; default 0 (the baseline).
    public init(componentId: String, experienceId: String? = nil, optimizationContextId: String? = nil, variantIndex: Int = 0) {
        self.componentId = componentId
        self.experienceId = experienceId
        self.optimizationContextId = optimizationContextId
        self.variantIndex = variantIndex
    }

    /// The bridge payload: the two required keys always, optionals only when set.
    public var jsonValue: JSONValue {
        var object: OrderedDictionary<String, JSONValue> = [
            "componentId": .string(componentId), "variantIndex": .number(JSONNumber(variantIndex)),
        ]
        if let experienceId { object["experienceId"] = .string(experienceId) }
        if let optimizationContextId { object["optimizationContextId"] = .string(optimizationContextId) }
        return .object(object)
    }
}
