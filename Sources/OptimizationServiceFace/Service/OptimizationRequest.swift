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
import EventOutbox
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
    private var logger: Logger {
        var logger = service.environment.logger
        if let requestId = options.requestId { logger[metadataKey: "request-id"] = "\(requestId)" }
        return logger
    }

    private struct State {
        var profile: JSONValue?
        /// ``profile`` as JSON text, written once per profile: what an Insights event carries.
        var profileText: String?
        var selections: SelectedOptimizations?
        var changes: [JSONValue]?
        var rendered = RenderedVariants()
    }

    private let state: Mutex<State>

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

    // MARK: The call

    /// Runs `body` in an `optimization.request` span for `method` (a child of the task's current
    /// span, current while `body` runs) and sets its outcome (`outcome` of the result) or its
    /// error; without a tracer (the no-op one) it runs `body` with no span.
    private func traced<Value>(
        _ method: String, outcome: (Value) -> String, _ body: ((any Span)?) async throws(OptimizationError) -> Value
    ) async throws(OptimizationError) -> Value {
        guard service.tracesRequests else { return try await body(nil) }
        let span = service.tracer.startSpan(OptimizationTelemetry.requestSpanName, ofKind: .internal)
        defer { span.end() }
        span.attributes[OptimizationTelemetry.Attribute.requestMethod] = method
        let result = await ServiceContext.$current.withValue(span.context) { () async -> Result<Value, OptimizationError> in
            do throws(OptimizationError) {
                return .success(try await body(span))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let value):
            span.attributes[OptimizationTelemetry.Attribute.outcome] = outcome(value)
            return value
        case .failure(let error):
            span.attributes[OptimizationTelemetry.Attribute.errorType] = error.telemetryName
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    private func call(
        _ event: EventMethod, _ payload: OrderedDictionary<String, JSONValue>, span: (any Span)?
    ) async throws(OptimizationError) -> EventResult {
        let running = try service.requireRunning()
        let method = event.rawValue
        let sticky = event == .trackView && payload["sticky"] == .bool(true)
        let callsExperience = sticky || service.experienceMethods.withLock { $0.contains(method) }
        if !callsExperience, state.withLock({ $0 }).profile?["id"]?.stringValue.map({ !$0.isEmpty }) != true {
            throw .profileIdRequired(method: method)
        }
        let payloadText: String
        do {
            payloadText = try JSONValue.object(payload).jsonText()
        } catch {
            throw .bridgeError("\(method) payload cannot be serialized: \(error)")
        }
        guard let exchange = try await exchange(
            BridgeContract.Service.call, [.string(method), .json(payloadText)], method: method, callsExperience: callsExperience,
            sendsProfile: sticky, running: running, span: span)
        else {
            return EventResult(outcome: .timedOut(after: budget))
        }
        let answer = exchange.answer
        guard answer["accepted"]?.boolValue == true else {
            report(blocked: answer["blocked"]?.value, method: method)
            service.metrics.event(method, accepted: false)
            return EventResult(outcome: .blocked(.consent))
        }
        service.metrics.event(method, accepted: true)
        let (outcome, data) = experienceOutcome(of: exchange, method: method) ?? (.accepted, nil)
        if let items = answer["insights"]?.elements, !items.isEmpty {
            // Each item names its event in `events` by index (written once, handed on as the
            // engine wrote it: no tree, no second serialization) and carries a profile only when
            // it is not the request's (a sticky view's, as its Experience answer returned it).
            // The request's profile went to the engine as its id alone and is not read back.
            let events = answer["events"]
            let request = state.withLock { ($0.profile?["id"]?.stringValue, $0.profileText) }
            let insights = try items.map { item throws(OptimizationError) -> InsightsEvent in
                let profile = item["profile"]
                guard let index = item["event"]?.value.intValue, let event = events?[index],
                      let messageId = event["messageId"]?.stringValue, !messageId.isEmpty,
                      let profileId = profile.map({ $0["id"]?.stringValue }) ?? request.0,
                      let profileJSON = profile?.jsonText ?? request.1
                else {
                    service.metrics.insightsRefused(count: 1)
                    throw .bridgeError("the shared core built an Insights event without a profile, an event or a messageId")
                }
                return InsightsEvent(
                    profileId: profileId, profileJSON: profileJSON, messageId: messageId,
                    consent: event["context"]?["gdpr"]?["isConsentGiven"]?.boolValue == true, eventJSON: event.jsonText)
            }
            if let relay = running.sharedOutbox {
                let events = insights.map { insight in
                    OutboxEvent(
                        queue: .insights, messageId: insight.messageId, profileId: insight.profileId.isEmpty ? nil : insight.profileId,
                        consent: insight.consent, payload: Array(insight.itemJSON.utf8))
                }
                // Stored: a replica claims and delivers them. Otherwise (the store is away) they
                // are queued in this replica's memory.
                if await relay.store(events) { return EventResult(outcome: outcome, eventIn: answer["events"]?[0], data: data) }
            }
            do {
                service.metrics.queueDepth.record(try running.delivery.enqueue(insights))
            } catch .notInitialized {
                throw .shutDown
            }
        }
        return EventResult(outcome: outcome, eventIn: answer["events"]?[0], data: data)
    }

    /// The latency budget of this request's Experience calls.
    private var budget: Duration { options.experienceTimeout ?? service.options.experienceTimeout }

    /// Runs the async `__service` function `function(…arguments, request, requestId)` for this
    /// request's visitor. A call that goes to the Experience API holds the visitor's profile
    /// (one Experience call at a time per profile; waiting counts against the budget) and asks
    /// the service's one circuit (`DeliveryCircuit`), which makes it fail fast or admits
    /// it; an admitted call's Experience outcome is recorded.
    ///
    /// An Experience call crosses into JavaScript twice: the call answers with the request to
    /// send (`experienceRequest`, with its `context`) and gives its engine back to the pool;
    /// Swift sends the request (`ServiceDelivery/sendExperience(_:budgetMilliseconds:)`: the
    /// budget, overload retries), then any engine of the pool turns the answer into the call's
    /// final outcome (`__service.interpretExperience`).
    /// - Returns: the final answer (read in place), its Experience outcome (`experience`, built
    ///   once) and when the call started (uptime ns); nil when the call gave up waiting for the
    ///   profile's earlier call (no request was made).
    /// - Parameter sendsProfile: the engine receives the request's whole profile (a sticky view,
    ///   whose Insights event falls back to it); otherwise only its id, all the shared core reads.
    /// - Parameter span: the call's `optimization.request` span, which gets the budget, the
    ///   profile wait and the engine wait; nil when not tracing.
    private func exchange(
        _ function: BridgeFunction, _ arguments: [JavaScriptValue], method: String, callsExperience: Bool, sendsProfile: Bool = false,
        running: OptimizationService.Running, span: (any Span)?
    ) async throws(OptimizationError) -> (answer: BridgeDocument, experience: JSONValue?, started: UInt64)? {
        let current = state.withLock { $0 }
        let budget = budget
        let heldProfile = callsExperience ? current.profile?["id"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } : nil
        let clock = service.environment.clock
        let waitStarted = clock.now()
        if let heldProfile {
            guard await service.profileCalls.acquire(heldProfile, within: budget) else {
                logger.warning("Experience call gave up waiting for the profile's earlier call", metadata: ["method": "\(method)"])
                return nil
            }
        }
        defer { if let heldProfile { service.profileCalls.release(heldProfile) } }
        let admitted = callsExperience && running.delivery.admitExperienceCall()
        // What is left of the budget after waiting for the profile.
        let waited = max(0, clock.now() - waitStarted)
        let remaining = budget.inMilliseconds - waited
        if let span {
            span.attributes[OptimizationTelemetry.Attribute.callsExperience] = callsExperience
            if callsExperience { span.attributes[OptimizationTelemetry.Attribute.budgetMilliseconds] = Int(budget.inMilliseconds.rounded()) }
            if waited > 0 { span.attributes[OptimizationTelemetry.Attribute.profileWaitMilliseconds] = Int(waited.rounded()) }
        }
        let requestText: String
        do {
            // A profile that is its id alone (a request's before any answer) goes as it is.
            let whole = sendsProfile || (current.profile?.objectValue?.count ?? 0) <= 1
            let profile = whole ? current.profile : current.profile?["id"].map { JSONValue.object(["id": $0]) }
            requestText = try requestScope(profile: profile, failFast: callsExperience && !admitted, budgetMilliseconds: remaining).jsonText()
        } catch {
            if admitted { running.delivery.recordExperienceOutcome(nil) }
            throw .bridgeError("\(method) request cannot be serialized: \(error)")
        }
        let runtime = running.pool.engineForAsyncCall()
        let started = DispatchTime.now().uptimeNanoseconds
        var answer: BridgeDocument
        do {
            answer = try await RequestLogging.$requestId.withValue(options.requestId) {
                try await runtime.channel.requestDocument(function, arguments: arguments + [.json(requestText)], on: runtime.engine)
            }.document
            if let pending = answer["experienceRequest"] {
                answer = try await deliver(
                    pending, context: answer["context"], method: method, budgetMilliseconds: remaining, running: running, span: span)
            }
        } catch {
            if admitted { running.delivery.recordExperienceOutcome(nil) }
            if let error = error as? OptimizationError {
                if case .notInitialized = error, !service.isRunning { throw .shutDown }
                throw error
            }
            throw .bridgeError("\(error)")
        }
        let experience = answer["experience"]?.value
        if admitted {
            let isOpen = running.delivery.recordExperienceOutcome(experience)
            service.metrics.circuit("experience", isOpen: isOpen)
        }
        return (answer, experience, started)
    }

    /// Sends a call's Experience request (no engine held meanwhile) and has an engine of the
    /// pool interpret the answer with the call's `context`.
    /// - Returns: the call's final answer.
    /// - Throws: `OptimizationError/notInitialized` when the service closed before the answer
    ///   was interpreted; `OptimizationError/bridgeError(_:)` for a request the engine built
    ///   wrong or an interpretation that failed.
    private func deliver(
        _ pending: BridgeDocument, context: BridgeDocument?, method: String, budgetMilliseconds: Double, running: OptimizationService.Running,
        span: (any Span)?
    ) async throws(OptimizationError) -> BridgeDocument {
        guard let context, let url = pending["url"]?.stringValue, let httpMethod = pending["method"]?.stringValue else {
            throw .bridgeError("\(method): the shared core built an Experience request without a url, a method or a context")
        }
        var headers: [String: String] = [:]
        for (name, value) in pending["headers"]?.value.objectValue ?? [:] {
            if let value = value.stringValue { headers[name] = value }
        }
        let request = FetchRequest(url: url, method: httpMethod, headers: headers, body: pending["body"]?.stringValue)
        let delivery = await running.delivery.sendExperience(request, budgetMilliseconds: budgetMilliseconds)
        var arguments: [JavaScriptValue] = [.json(context.jsonText)]
        switch delivery {
        case .answered(let response):
            let headersText = (try? JSONValue.object(OrderedDictionary(uniqueKeysWithValues: response.headers.map { ($0.key, JSONValue.string($0.value)) })).jsonText()) ?? "{}"
            arguments += [.number(Double(response.status)), .json(headersText), .string(response.body), .null]
        case .failed(let message):
            arguments += [.number(0), .null, .string(message), .string("transport")]
        case .timedOut:
            arguments += [.number(0), .null, .string(""), .string("timeout")]
        case .closed:
            throw .notInitialized
        }
        let text: String?
        do {
            let interpreted = try RequestLogging.$requestId.withValue(options.requestId) {
                try running.pool.withEngine { runtime in
                    try runtime.engine.call(BridgeContract.Service.interpretExperience, arguments: arguments).stringValue
                }
            }
            text = interpreted.result
            span?.attributes[OptimizationTelemetry.Attribute.engineWaited] = interpreted.waited
        } catch {
            if !service.isRunning { throw .notInitialized }
            throw .bridgeError("\(method): the Experience answer could not be interpreted: \(error)")
        }
        guard let text, let document = BridgeDocument(jsonText: text) else {
            throw .bridgeError("\(method): interpretExperience answered no JSON text")
        }
        return document
    }

    /// The outcome of the answer's Experience call (nil without one); a delivered answer's data
    /// is adopted by the request.
    /// The answer's profile is kept as the engine wrote it, for the request's Insights events.
    private func experienceOutcome(
        of exchange: (answer: BridgeDocument, experience: JSONValue?, started: UInt64), method: String
    ) -> (EventOutcome, JSONValue?)? {
        guard let experience = exchange.experience else { return nil }
        let mapped = Self.outcome(of: experience, budget: budget)
        service.metrics.experience(mapped, nanoseconds: DispatchTime.now().uptimeNanoseconds - exchange.started)
        guard mapped == .delivered, let answered = experience["data"] else {
            logger.warning("Experience call did not succeed; the request keeps its selections", metadata: ["method": "\(method)", "outcome": "\(mapped)"])
            return (mapped, nil)
        }
        adopt(answered, profileText: exchange.answer["experience"]?["data"]?["profile"]?.jsonText)
        return (mapped, answered)
    }

    /// The `request` argument of `__service.call`.
    private func requestScope(profile: JSONValue?, failFast: Bool, budgetMilliseconds: Double) -> JSONValue {
        var scope: OrderedDictionary<String, JSONValue> = [:]
        if let events = options.consent.events { scope["consent"] = .bool(events) }
        if let profile { scope["profile"] = profile }
        if let locale = options.locale ?? service.config.locale { scope["locale"] = .string(locale) }
        if !options.eventContext.isEmpty { scope["eventContext"] = .object(options.eventContext) }
        if let ip = options.ip { scope["ip"] = .string(ip) }
        if options.preflight { scope["preflight"] = .bool(true) }
        scope["timeoutMs"] = .number(JSONNumber(Int(min(max(1, budgetMilliseconds), 1e12).rounded(.down))))
        if failFast { scope["failFast"] = .bool(true) }
        // The time of the call travels with it: the engine builds its events without asking
        // the host clock.
        if let now = JSONNumber(service.environment.clock.now()) { scope["now"] = .number(now) }
        return .object(scope)
    }

    private func adopt(_ data: JSONValue, profileText: String?) {
        let selections = data["selectedOptimizations"].flatMap { try? SelectedOptimizations(json: $0) }
        let profile = data["profile"].flatMap { $0["id"]?.stringValue != nil ? $0 : nil }
        let text = profile.flatMap { profile in profileText ?? ((try? profile.jsonText()) ?? nil) }
        state.withLock { state in
            if let profile {
                state.profile = profile
                state.profileText = text
            }
            if let selections { state.selections = selections }
            if let changes = data["changes"]?.arrayValue { state.changes = changes }
        }
    }

    private func report(blocked: JSONValue?, method: String) {
        let event = BlockedEvent(
            reason: blocked?["reason"]?.stringValue ?? "consent", method: blocked?["method"]?.stringValue ?? method,
            args: blocked?["args"]?.arrayValue ?? [])
        logger.debug("blocked event payload", metadata: ["method": "\(method)", "args": "\((try? JSONValue.array(event.args).jsonText()) ?? "")"])
        service.blockedEventBroadcaster.yield(event)
    }

    static func outcome(of experience: JSONValue, budget: Duration) -> EventOutcome {
        if experience["ok"]?.boolValue == true { return .delivered }
        let status = experience["status"]?.intValue ?? 0
        let reason = experience["reason"]?.stringValue ?? "Experience API call failed"
        switch experience["kind"]?.stringValue {
        case "timeout": return .timedOut(after: budget)
        case "circuitOpen": return .circuitOpen
        case "retry": return .failed(status: status, code: experience["code"]?.stringValue, reason: reason)
        default: return .refused(status: status, code: experience["code"]?.stringValue, reason: reason)
        }
    }
}

extension OptimizationRequest: EventRecording {}
