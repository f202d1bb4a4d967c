import OptimizationVocabulary
import OrderedCollections
import OptimizationJSON
import OptimizationEngine

// Consent.
//
// Two independent tri-state values: event consent (may events be emitted) and persistence
// consent (may profile continuity be stored). Before the visitor decides both are nil. Only event
// consent `true` unlocks every event type; `false` and nil gate alike through
// `OptimizationConfig.allowedEventTypes` (default `["identify", "screen"]`, `[]` = strict
// opt-in). Withdrawing event consent discards every queued event.
//
// Threading: all methods are synchronous and safe from any thread; the change is applied (and
// `state` updated) before they return. Errors: none are thrown; before `initialize` (or after
// `destroy()`) the setters do nothing and `hasConsent` answers false.
extension OptimizationClient {
    /// Sets event consent AND persistence consent to `accept`. `false` discards every queued
    /// event (Experience and Insights).
    public func consent(_ accept: Bool) {
        callSync(BridgeContract.Visitor.consent, .bool(accept))
    }

    /// Sets only the consents given; nil leaves a value untouched (both nil: no change).
    /// `events: false` discards every queued event.
    public func consent(events: Bool? = nil, persistence: Bool? = nil) {
        var input: OrderedDictionary<String, JSONValue> = [:]
        if let events { input["events"] = .bool(events) }
        if let persistence { input["persistence"] = .bool(persistence) }
        guard let text = try? JSONValue.object(input).jsonText() else { return }
        callSync(BridgeContract.Visitor.consent, .json(text))
    }

    /// Whether a call of the core method `method` (`identify`, `page`, `screen`, `track`,
    /// `trackView`, `trackClick`, `trackFlagView`, …) would pass the consent gate now.
    /// False before `initialize`.
    public func hasConsent(_ method: String) -> Bool {
        callSync(BridgeContract.Visitor.hasConsent, .string(method))?.boolValue ?? false
    }
}
