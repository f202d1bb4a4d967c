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

/// One incoming request of an ``OptimizationService``: the visitor's consent, profile, locale and
/// selections for this request only (``OptimizationService/forRequest(_:)``). Nothing of it is
/// kept by the service after the request; another request never sees it, whichever engine
/// serves it.
///
/// **Event calls.** `identify`, `page`, `screen`, `track` make one Experience API profile upsert
/// each, within the request's latency budget, and the request's profile, selections and changes
/// follow a successful answer (`EventOutcome.delivered`); any other outcome (timeout, failure,
/// refusal, open circuit) comes back in the call's `EventResult` and the request keeps rendering
/// with the selections it had.
/// `trackView`, `trackClick`, `trackHover`, `trackFlagView` put an Insights event into the
/// service's Insights queue of its profile and return once it is there; they need a profile id. Every call
/// is gated by the request's consent and the service's allow-list (default
/// `["identify", "page"]`); a blocked call returns `.blocked(.consent)`, sends nothing, and is
/// reported once on ``OptimizationService/blockedEvents``.
///
/// **Tracing.** Each event call, ``prepareRequestHandoff(routeKey:initialEvents:page:)`` and
/// ``commitReplay(_:)`` runs in an `optimization.request` span (`OptimizationTelemetry/requestSpanName`),
/// a child of the task's current span, whose Experience API request span is its child;
/// ``getFlag(_:)`` records a `feature_flag.evaluation` event on the current span. With the
/// no-op tracer none of it costs more than one check. The article “Observability” lists the
/// attributes; none of them holds visitor data.
///
/// **Threading.** Safe from any thread or task; calls of one request are meant to run in order
/// (the request's state follows the last Experience answer).
public final class OptimizationRequest: Sendable {
    /// The service that created this request and whose engines and delivery path it uses.
    public let service: OptimizationService
    /// What the service passed to ``OptimizationService/forRequest(_:)``: the request's consent,
    /// profile id, locale, event context and handoff selections. Never changes.
    public let options: RequestOptions
    /// The service's logger with the request's id as metadata, made when the request logs (rare):
    /// a log handler may rebuild its metadata text on every change, so a request that logs
    /// nothing pays nothing for it.
    var logger: Logger {
        var logger = service.environment.logger
        if let requestId = options.requestId { logger[metadataKey: "request-id"] = "\(requestId)" }
        return logger
    }

    struct State {
        var profile: JSONValue?
        /// ``profile`` as JSON text, written once per profile: what an Insights event carries.
        var profileText: String?
        var selections: SelectedOptimizations?
        var changes: [JSONValue]?
        var rendered = RenderedVariants()
    }

    let state: Mutex<State>

    init(service: OptimizationService, options: RequestOptions) {
        self.service = service
        self.options = options
        let profile = options.profileId.flatMap { $0.isEmpty ? nil : JSONValue.object(["id": .string($0)]) }
        state = Mutex(State(
            profile: profile, profileText: (try? profile?.jsonText()) ?? nil,
            selections: options.selectedOptimizations, changes: options.changes))
    }

    // MARK: What the request knows

    /// The visitor's profile: `{"id"}` from ``RequestOptions/profileId`` until an Experience call
    /// answers, then the API's profile. Nil for a new visitor before any answer.
    public var profile: JSONValue? { state.withLock { $0.profile } }

    /// The profile id, when known.
    public var profileId: String? { profile?["id"]?.stringValue }

    /// The selections this request renders with: the last successful Experience answer's, else
    /// ``RequestOptions/selectedOptimizations``; nil means nothing selected.
    public var selectedOptimizations: SelectedOptimizations? { state.withLock { $0.selections } }

    /// The flag changes that go with ``selectedOptimizations``.
    public var changes: [JSONValue]? { state.withLock { $0.changes } }

    /// True only when the visitor gave persistence consent: then the service may store
    /// ``profileId`` (for example in a cookie) for the next request.
    public var canPersistProfile: Bool { options.consent.persistence == true }

    // MARK: Resolution, flags, merge tags

    /// The entry to render for this visitor, with the request's current selections. Synchronous,
    /// never throws (the baseline on any failure). The rendered variant is remembered for
    /// ``renderCacheKey``.
    public func resolveOptimizedEntry(baseline: ContentfulEntry) -> ResolvedOptimizedEntry {
        let resolved = service.resolveOptimizedEntry(baseline: baseline, selectedOptimizations: selectedOptimizations)
        state.withLock { $0.rendered.record(baseline: baseline.id, resolved: resolved) }
        return resolved
    }

    /// A key for caching this request's rendered output across visitors: it depends only on the
    /// variants this request rendered (through ``resolveOptimizedEntry(baseline:)``) and the
    /// locale, never on the profile, so every visitor who gets the same variants shares it.
    public var renderCacheKey: String {
        let locale = options.locale ?? service.config.locale ?? ""
        return state.withLock { $0.rendered.cacheKey(locale: locale) }
    }

    /// The baseline id → rendered entry id of every entry this request resolved (`""` for an
    /// empty variant).
    public var renderedVariants: [String: String] { state.withLock { $0.rendered.variants } }

    /// A custom flag's value from the request's changes (`.null` when absent). Reading a flag
    /// sends nothing (stateless model; use ``trackFlagView(componentId:experienceId:variantIndex:)``).
    ///
    /// Each read is a flag evaluation: a `feature_flag.evaluation` event on the task's current
    /// span and a count on `optimization_flag_evaluations_total` (reason `targeting_match` for a
    /// selected variant, `default` for a baseline, `error` with `error.type` `flag_not_found`,
    /// `provider_not_ready` or `general` otherwise). Nothing when neither a tracer nor a metrics
    /// backend is set.
    public func getFlag(_ name: String) -> JSONValue {
        let changes = state.withLock { $0.changes }
        let read = readFlag(name, changes: changes)
        let telemetry = service.metrics.flagEvaluations
        guard telemetry.isRecording else { return read.value }
        switch read {
        case .value(let value): telemetry.record(FeatureFlagEvaluation(key: name, value: value, changes: changes ?? []))
        case .notRunning: telemetry.record(FeatureFlagEvaluation(key: name, reason: .error, errorType: "provider_not_ready"))
        case .failed: telemetry.record(FeatureFlagEvaluation(key: name, reason: .error, errorType: "general"))
        }
        return read.value
    }

    /// The value ``getFlag(_:)`` returns, without recording an evaluation (for an evaluator that
    /// records its own, such as OFREP's).
    package func flagValue(_ name: String) -> JSONValue {
        readFlag(name, changes: state.withLock { $0.changes }).value
    }

    /// How reading a flag went.
    private enum FlagRead {
        case value(JSONValue)
        /// The service does not run.
        case notRunning
        /// The engine failed (logged).
        case failed

        var value: JSONValue {
            if case .value(let value) = self { return value }
            return .null
        }
    }

    private func readFlag(_ name: String, changes: [JSONValue]?) -> FlagRead {
        guard let running = service.running else { return .notRunning }
        guard let changesText = try? JSONValue.array(changes ?? []).jsonText() else { return .failed }
        do {
            let text = try running.pool.withEngine { runtime in
                try runtime.engine.call(BridgeContract.Service.getFlag, .string(name), .json(changesText)).stringValue
            }.result
            return .value(text.flatMap { try? JSONValue(jsonText: $0) } ?? .null)
        } catch {
            logger.warning("flag read failed", metadata: ["error": "\(error)"])
            return .failed
        }
    }

    /// The value of a merge tag (`nt_mergetag` entry) for the request's profile, or its
    /// `nt_fallback`; nil for an invalid entry.
    public func getMergeTagValue(_ mergeTagEntry: JSONValue) -> String? {
        guard let running = service.running, let entryText = try? mergeTagEntry.jsonText() else { return nil }
        let profileText = state.withLock { $0.profileText }
        do {
            return try running.pool.withEngine { runtime in
                try runtime.engine.call(
                    BridgeContract.Service.getMergeTagValue, .json(entryText), profileText.map(JavaScriptValue.json) ?? .null
                ).stringValue
            }.result
        } catch {
            logger.warning("merge tag failed", metadata: ["error": "\(error)"])
            return nil
        }
    }

    // MARK: Event calls

    /// Sends one event call through the service's pipeline for this request's visitor
    /// (`EventRecording`, whose typed methods the request offers: `identify`, `page`,
    /// `screen`, `track`, `trackView`, `trackClick`, `trackHover`, `trackFlagView`). An
    /// Experience call makes one upsert within the request's budget and reports how it went; an
    /// Insights call joins the service's Insights queue of its profile and needs a profile id.
    /// - Throws: `OptimizationError/shutDown`, `OptimizationError/profileIdRequired(method:)`,
    ///   `OptimizationError/eventNotStored(_:)`, `OptimizationError/bridgeError(_:)` for an
    ///   invalid payload.
    public func record(_ method: EventMethod, payload: OrderedDictionary<String, JSONValue>) async throws(OptimizationError) -> EventResult {
        try await traced(method.rawValue, outcome: { $0.outcome.telemetryName }) { span throws(OptimizationError) in
            try await call(method, payload, span: span)
        }
    }
}

extension OptimizationRequest: EventRecording {}
