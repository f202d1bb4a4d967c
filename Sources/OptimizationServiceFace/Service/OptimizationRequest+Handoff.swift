import OptimizationServiceDelivery
import Dispatch
import JavaScriptHost
import OptimizationDelivery
import Logging
import OrderedCollections
import Synchronization
import HostPlatform
import OptimizationJSON
import OptimizationContent
import OptimizationEngine
import Tracing

extension OptimizationRequest {
    // MARK: Handoff to the browser (API v2)

    /// An event the first request reports before its page view, for ``prepareRequestHandoff(routeKey:initialEvents:page:)``.
    public enum HandoffEvent: Sendable, Equatable {
        /// `identify` with the host's id for the visitor and traits.
        case identify(userId: String, traits: OrderedDictionary<String, JSONValue> = [:])
        /// `track` with an event name and properties.
        case track(event: String, properties: OrderedDictionary<String, JSONValue> = [:])

        var payload: JSONValue {
            switch self {
            case .identify(let userId, let traits):
                return ["type": "identify", "userId": .string(userId), "traits": .object(traits)]
            case .track(let event, let properties):
                return ["type": "track", "event": .string(event), "properties": .object(properties)]
            }
        }
    }

    /// Evaluates this request's page view (after `initialEvents`) with the Experience API
    /// without storing it (a preflight call), adopts the answer like an event call, and
    /// returns the handoff the page carries to the browser: its `replay` holds exactly the
    /// evaluated events, which the browser commits once.
    ///
    /// Without a replay (and without a call): when the request may not send `page` (consent and
    /// allow-list; the page is reported blocked), when `routeKey` is not a path starting with
    /// `/`, or when the events exceed the API's limits (200 events, 50 `identify`). An initial
    /// event the allow-list refuses is reported blocked and left out. When the preview call
    /// fails the handoff keeps its replay and `data` is nil.
    /// - Parameters:
    ///   - routeKey: the page's path and query; the browser replays only there.
    ///   - initialEvents: `identify` / `track` events reported before the page view.
    ///   - page: the page builder's input (as ``page(_:)`` takes it).
    /// - Returns: the handoff (scope `private-request`: render it with
    ///   `Cache-Control: private, no-store`) and the Experience answer when the preview
    ///   succeeded.
    /// - Throws: `OptimizationError.shutDown` after shutdown; `OptimizationError.bridgeError(_:)`
    ///   for an invalid input.
    public func prepareRequestHandoff(
        routeKey: String, initialEvents: [HandoffEvent] = [], page: OrderedDictionary<String, JSONValue> = [:]
    ) async throws(OptimizationError) -> (handoff: OptimizationHandoff, data: JSONValue?) {
        try await traced("prepareRequestHandoff", outcome: { $0.data == nil ? "accepted" : "delivered" }) { span throws(OptimizationError) in
            try await prepareHandoff(routeKey: routeKey, initialEvents: initialEvents, page: page, span: span)
        }
    }

    private func prepareHandoff(
        routeKey: String, initialEvents: [HandoffEvent], page: OrderedDictionary<String, JSONValue>, span: (any Span)?
    ) async throws(OptimizationError) -> (handoff: OptimizationHandoff, data: JSONValue?) {
        let running = try service.requireRunning()
        let input: JSONValue = ["routeKey": .string(routeKey), "initialEvents": .array(initialEvents.map(\.payload)), "page": .object(page)]
        let inputText: String
        do {
            inputText = try input.jsonText()
        } catch {
            throw .bridgeError("prepareRequestHandoff input cannot be serialized: \(error)")
        }
        let privateHandoff = OptimizationHandoff(cache: .init(scope: .privateRequest), profileId: profileId)
        guard let exchange = try await exchange(
            BridgeContract.Service.prepareHandoff, [.json(inputText)], method: "prepareRequestHandoff", callsExperience: true, running: running,
            span: span)
        else {
            return (privateHandoff, nil)
        }
        for blocked in exchange.answer["blocked"]?.value.arrayValue ?? [] {
            report(blocked: blocked, method: blocked["method"]?.stringValue ?? "page")
        }
        guard let handoff = exchange.answer["handoff"].flatMap({ OptimizationHandoff(json: $0.value) }) else {
            throw .bridgeError("prepareRequestHandoff answered without a handoff")
        }
        let data = experienceOutcome(of: exchange, method: "prepareRequestHandoff")?.1
        if let span {
            var attributes: SpanAttributes = [:]
            attributes[OptimizationTelemetry.Attribute.replayEventCount] = handoff.replay?.events.count ?? 0
            attributes[OptimizationTelemetry.Attribute.handoffCacheScope] = handoff.cache.scope.rawValue
            span.addEvent(SpanEvent(name: OptimizationTelemetry.handoffPreparedEventName, attributes: attributes))
        }
        return (handoff, data)
    }

    /// Commits a handoff's replay as the browser does: in one stored Experience call for this
    /// request's visitor; the answer is adopted. For hosts that stand in for a browser (tests,
    /// server-to-server flows).
    ///
    /// **Consent is this request's.** Each event is gated by the consent and allow-list of the
    /// request that commits it, not of the one that prepared the handoff: an event it may not
    /// send is reported on the blocked-event stream and left out; an event it may send keeps
    /// its message id and payload, and its `context.gdpr.isConsentGiven` is re-stamped with this
    /// request's consent. So a visitor who declined after the page was rendered sends no
    /// `track` event, and a replay forged as consented is sent as what it is.
    ///
    /// The replay is not authenticated here: a host that accepts replays from a browser must
    /// commit only one it issued, for the visitor it issued it to, once.
    /// - Returns: what the call did: `.blocked(.consent)` when no event may be sent now (nothing
    ///   is sent), otherwise the Experience call's outcome.
    /// - Throws: `OptimizationError.bridgeError(_:)` for a replay that is not `identify`/`track`
    ///   events followed by one `page` event (1…200 events, at most 50 `identify`, a route key
    ///   starting with `/`); `OptimizationError.shutDown` after shutdown.
    public func commitReplay(_ replay: OptimizationHandoff.Replay) async throws(OptimizationError) -> EventResult {
        try await traced("commitReplay", outcome: { $0.outcome.telemetryName }) { span throws(OptimizationError) in
            try await commit(replay, span: span)
        }
    }

    private func commit(_ replay: OptimizationHandoff.Replay, span: (any Span)?) async throws(OptimizationError) -> EventResult {
        let running = try service.requireRunning()
        let replayText: String
        do {
            replayText = try JSONValue.object(["routeKey": .string(replay.routeKey), "events": .array(replay.events)]).jsonText()
        } catch {
            throw .bridgeError("commitReplay replay cannot be serialized: \(error)")
        }
        guard let exchange = try await exchange(
            BridgeContract.Service.commitReplay, [.json(replayText)], method: "commitReplay", callsExperience: true, running: running,
            span: span)
        else {
            return EventResult(outcome: .timedOut(after: budget))
        }
        for blocked in exchange.answer["blocked"]?.value.arrayValue ?? [] {
            report(blocked: blocked, method: blocked["method"]?.stringValue ?? "page")
        }
        guard exchange.answer["accepted"]?.boolValue == true else { return EventResult(outcome: .blocked(.consent)) }
        let (outcome, data) = experienceOutcome(of: exchange, method: "commitReplay") ?? (.accepted, nil)
        if let span {
            var attributes: SpanAttributes = [:]
            attributes[OptimizationTelemetry.Attribute.replayEventCount] = replay.events.count
            attributes[OptimizationTelemetry.Attribute.outcome] = outcome.telemetryName
            span.addEvent(SpanEvent(name: OptimizationTelemetry.replayCommittedEventName, attributes: attributes))
        }
        return EventResult(outcome: outcome, event: replay.events.last, data: data)
    }
}
