import OrderedCollections
import OptimizationContent
import OptimizationJSON

/// The event calls of both faces: `OptimizationClient` (one visitor) and
/// `OptimizationRequest` (one visitor of an `OptimizationService`) offer exactly these
/// methods, with the same arguments and the same `EventResult`, because both implement them
/// here on top of one requirement, ``record(_:payload:)``.
///
/// Every call goes through the same pipeline: consent gate (and the allow-list before consent),
/// event building, then the event's path: the Experience API (`identify`, `page`, `screen`,
/// `track`, a sticky `trackView`) or the Insights queue (the others). What differs by face is
/// said by name: the client keeps an Experience event it could not deliver queued for a retry
/// (`EventOutcome.accepted`), a request reports how its one Experience call went; a request's
/// Insights calls need a profile id (`OptimizationError.profileIdRequired(method:)`).
///
/// **Threading.** Every method may be called from any task; gate, build and hand-over happen
/// before it returns.
public protocol EventRecording: Sendable {
    /// Sends one event call through the face's pipeline. The typed methods of this protocol
    /// build `payload` and call this; prefer them.
    /// - Parameters:
    ///   - method: the call.
    ///   - payload: its arguments, as the shared core reads them.
    /// - Returns: what the call did (blocked, accepted, delivered, refused, …).
    /// - Throws: `OptimizationError` when the call could not be made at all (not initialized,
    ///   shut down, an invalid payload, a missing profile id, an event the outbox could not
    ///   store). Every duration and index an event carries (`variantIndex`, `viewDurationMs`,
    ///   `hoverDurationMs`) must be an integer ≥ 0: another value fails the call with
    ///   `OptimizationError.bridgeError(_:)` naming the field, before anything is queued.
    func record(_ method: EventMethod, payload: OrderedDictionary<String, JSONValue>) async throws(OptimizationError) -> EventResult
}

extension EventRecording {
    // MARK: Experience events

    /// Identifies the visitor (`identify` event, Experience API).
    /// - Parameters:
    ///   - userId: the host's id for the visitor.
    ///   - traits: visitor traits (never logged above `debug`).
    /// - Returns: what the call did; `EventResult.accepted` is false when consent blocked it.
    /// - Throws: as ``record(_:payload:)``.
    @discardableResult
    public func identify(userId: String, traits: OrderedDictionary<String, JSONValue>? = nil) async throws(OptimizationError) -> EventResult {
        var payload: OrderedDictionary<String, JSONValue> = ["userId": .string(userId)]
        if let traits { payload["traits"] = .object(traits) }
        return try await record(.identify, payload: payload)
    }

    /// Reports a page view (`page` event, Experience API). `payload` is the event builder's
    /// input: `properties` (merged over the default page), `name`, and the context keys `page`,
    /// `campaign`, `locale`, `location`, `userAgent` (on a request, over
    /// `RequestOptions/eventContext`); other keys are dropped.
    /// - Throws: as ``record(_:payload:)``.
    @discardableResult
    public func page(_ payload: OrderedDictionary<String, JSONValue> = [:]) async throws(OptimizationError) -> EventResult {
        try await record(.page, payload: payload)
    }

    /// Reports a screen view (`screen` event, Experience API); `properties` default to `{}`.
    /// - Throws: as ``record(_:payload:)``.
    @discardableResult
    public func screen(name: String, properties: OrderedDictionary<String, JSONValue> = [:]) async throws(OptimizationError) -> EventResult {
        try await record(.screen, payload: EventPayloads.screen(name: name, properties: properties, routeKey: nil))
    }

    /// Reports a custom event (`track` event, Experience API); `properties` default to `{}`.
    /// - Throws: as ``record(_:payload:)``.
    @discardableResult
    public func track(event: String, properties: OrderedDictionary<String, JSONValue> = [:]) async throws(OptimizationError) -> EventResult {
        var payload: OrderedDictionary<String, JSONValue> = ["event": .string(event)]
        if !properties.isEmpty { payload["properties"] = .object(properties) }
        return try await record(.track, payload: payload)
    }

    // MARK: Insights events

    /// Reports an entry view (Insights `component` event, gated as `component`). A sticky view
    /// (`sticky == true`) goes to the Experience API first (the client sends it once per
    /// `stickyTrackingKey ?? viewId`); the Insights event then uses the profile it returned.
    /// - Throws: as ``record(_:payload:)``.
    @discardableResult
    public func trackView(_ payload: TrackViewPayload) async throws(OptimizationError) -> EventResult {
        try await record(.trackView, payload: payload.jsonValue.objectValue ?? [:])
    }

    /// Reports a click on an entry (Insights `component_click` event, gated as
    /// `component_click`).
    /// - Throws: as ``record(_:payload:)``.
    @discardableResult
    public func trackClick(_ payload: TrackClickPayload) async throws(OptimizationError) -> EventResult {
        try await record(.trackClick, payload: payload.jsonValue.objectValue ?? [:])
    }

    /// Reports a hover over an entry (Insights `component_hover` event, gated as
    /// `component_hover`).
    /// - Parameters:
    ///   - componentId: `sys.id` of the hovered (baseline) entry.
    ///   - hoverId: identifies the hover (one per continuous hover).
    ///   - hoverDuration: how long the pointer stayed (sent in whole milliseconds; a negative one
    ///     fails the call).
    ///   - experienceId: the matched experience, if any.
    ///   - variantIndex: the rendered variant (0 for the baseline), if known.
    /// - Throws: as ``record(_:payload:)``.
    @discardableResult
    public func trackHover(
        componentId: String, hoverId: String, hoverDuration: Duration, experienceId: String? = nil, variantIndex: Int? = nil
    ) async throws(OptimizationError) -> EventResult {
        var payload: OrderedDictionary<String, JSONValue> = [
            "componentId": .string(componentId), "hoverId": .string(hoverId),
            "hoverDurationMs": .number(JSONNumber(hoverDuration.wholeMilliseconds)),
        ]
        if let experienceId { payload["experienceId"] = .string(experienceId) }
        if let variantIndex { payload["variantIndex"] = .number(JSONNumber(variantIndex)) }
        return try await record(.trackHover, payload: payload)
    }

    /// Reports that a flag's value was shown (Insights `component` event of type `Variable`,
    /// gated as `flag` or `component`). Reading a flag sends nothing by itself.
    /// - Parameters:
    ///   - componentId: the flag's key.
    ///   - experienceId: the matched experience, if any.
    ///   - variantIndex: the variant whose value was shown, if known.
    /// - Throws: as ``record(_:payload:)``.
    @discardableResult
    public func trackFlagView(componentId: String, experienceId: String? = nil, variantIndex: Int? = nil) async throws(OptimizationError) -> EventResult {
        var payload: OrderedDictionary<String, JSONValue> = ["componentId": .string(componentId)]
        if let experienceId { payload["experienceId"] = .string(experienceId) }
        if let variantIndex { payload["variantIndex"] = .number(JSONNumber(variantIndex)) }
        return try await record(.trackFlagView, payload: payload)
    }

    // MARK: Experiences (ExO) events, API v2

    /// Reports that an Experiences entity was seen (Insights `exo_node_view`, gated as
    /// `exo_node_view` or `component`). Needs API v2: with v1 the call throws
    /// `OptimizationError.bridgeError(_:)`.
    /// - Parameters:
    ///   - node: the entity.
    ///   - viewId: identifies the view (one per continuous view).
    ///   - viewDuration: how long it was visible (sent in whole milliseconds; a negative one fails
    ///     the call, as does a negative `node.variantIndex`).
    /// - Throws: as ``record(_:payload:)``.
    @discardableResult
    public func trackNodeView(_ node: ExperienceNode, viewId: String, viewDuration: Duration) async throws(OptimizationError) -> EventResult {
        var payload = node.payload
        payload["viewId"] = .string(viewId)
        payload["viewDurationMs"] = .number(JSONNumber(viewDuration.wholeMilliseconds))
        return try await record(.trackNodeView, payload: payload)
    }

    /// Reports a click on an Experiences entity (Insights `exo_node_click`, gated as
    /// `exo_node_click` or `component_click`). Needs API v2.
    /// - Throws: as ``record(_:payload:)``.
    @discardableResult
    public func trackNodeClick(_ node: ExperienceNode) async throws(OptimizationError) -> EventResult {
        try await record(.trackNodeClick, payload: node.payload)
    }

    /// Reports that the pointer rested on an Experiences entity (Insights `exo_node_hover`, gated
    /// as `exo_node_hover` or `component_hover`). Needs API v2.
    /// - Parameters:
    ///   - node: the entity.
    ///   - hoverId: identifies the hover (one per continuous hover).
    ///   - hoverDuration: how long the pointer stayed (sent in whole milliseconds; a negative one
    ///     fails the call).
    /// - Throws: as ``record(_:payload:)``.
    @discardableResult
    public func trackNodeHover(_ node: ExperienceNode, hoverId: String, hoverDuration: Duration) async throws(OptimizationError) -> EventResult {
        var payload = node.payload
        payload["hoverId"] = .string(hoverId)
        payload["hoverDurationMs"] = .number(JSONNumber(hoverDuration.wholeMilliseconds))
        return try await record(.trackNodeHover, payload: payload)
    }
}

/// Payloads more than one call builds.
package enum EventPayloads {
    /// `screen` and `trackCurrentScreen`: `name`, `properties` when not empty, `routeKey` when given.
    package static func screen(name: String, properties: OrderedDictionary<String, JSONValue>, routeKey: String?) -> OrderedDictionary<String, JSONValue> {
        var payload: OrderedDictionary<String, JSONValue> = ["name": .string(name)]
        if !properties.isEmpty { payload["properties"] = .object(properties) }
        if let routeKey { payload["routeKey"] = .string(routeKey) }
        return payload
    }
}
