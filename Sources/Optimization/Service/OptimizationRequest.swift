import Dispatch
import JavaScriptHost
import Logging
import OrderedCollections
import Synchronization

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
/// service's process-wide queue and return once it is there; they need a profile id. Every call
/// is gated by the request's consent and the service's allow-list (default
/// `["identify", "page"]`); a blocked call returns `.blocked(.consent)`, sends nothing, and is
/// reported once on ``OptimizationService/blockedEvents``.
///
/// **Threading.** Safe from any thread or task; calls of one request are meant to run in order
/// (the request's state follows the last Experience answer).
public final class OptimizationRequest: Sendable {
    /// The service that created this request and whose engines and delivery path it uses.
    public let service: OptimizationService
    /// What the service passed to ``OptimizationService/forRequest(_:)``: the request's consent,
    /// profile id, locale, event context and handoff selections. Never changes.
    public let options: RequestOptions
    private let logger: Logger

    private struct State {
        var profile: JSONValue?
        var selections: SelectedOptimizations?
        var changes: [JSONValue]?
        var rendered = RenderedVariants()
    }

    private let state: Mutex<State>

    init(service: OptimizationService, options: RequestOptions) {
        self.service = service
        self.options = options
        var logger = service.environment.logger
        if let requestId = options.requestId { logger[metadataKey: "request-id"] = "\(requestId)" }
        self.logger = logger
        state = Mutex(State(
            profile: options.profileId.flatMap { $0.isEmpty ? nil : JSONValue.object(["id": .string($0)]) },
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
    public func getFlag(_ name: String) -> JSONValue {
        let changes = state.withLock { $0.changes }
        guard let running = service.running, let changesText = try? JSONValue.array(changes ?? []).jsonText() else { return .null }
        do {
            let text = try running.pool.withEngine { runtime in
                try runtime.engine.call(BridgeContract.Service.getFlag, .string(name), .json(changesText)).stringValue
            }.result
            return text.flatMap { try? JSONValue(jsonText: $0) } ?? .null
        } catch {
            logger.warning("flag read failed", metadata: ["error": "\(error)"])
            return .null
        }
    }

    /// The value of a merge tag (`nt_mergetag` entry) for the request's profile, or its
    /// `nt_fallback`; nil for an invalid entry.
    public func getMergeTagValue(_ mergeTagEntry: JSONValue) -> String? {
        guard let running = service.running, let entryText = try? mergeTagEntry.jsonText() else { return nil }
        let profileText = (try? profile?.jsonText()) ?? nil
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
    /// (``EventRecording``, whose typed methods the request offers: `identify`, `page`,
    /// `screen`, `track`, `trackView`, `trackClick`, `trackHover`, `trackFlagView`). An
    /// Experience call makes one upsert within the request's budget and reports how it went; an
    /// Insights call joins the service's process-wide queue and needs a profile id.
    /// - Throws: `OptimizationError/shutDown`, `OptimizationError/profileIdRequired(method:)`,
    ///   `OptimizationError/eventNotStored(_:)`, `OptimizationError/bridgeError(_:)` for an
    ///   invalid payload.
    public func record(_ method: EventMethod, payload: OrderedDictionary<String, JSONValue>) async throws(OptimizationError) -> EventResult {
        try await call(method, payload)
    }

    // MARK: The call

    private func call(_ event: EventMethod, _ payload: OrderedDictionary<String, JSONValue>) async throws(OptimizationError) -> EventResult {
        let running = try service.requireRunning()
        let method = event.rawValue
        let sticky = event == .trackView && payload["sticky"] == .bool(true)
        let callsExperience = sticky || service.experienceMethods.withLock { $0.contains(method) }
        let current = state.withLock { $0 }
        if !callsExperience, current.profile?["id"]?.stringValue.map({ !$0.isEmpty }) != true {
            throw .profileIdRequired(method: method)
        }
        // One Experience call at a time per profile (the API refuses concurrent work on one
        // profile); waiting counts against the call's budget.
        let budget = options.experienceTimeout ?? service.options.experienceTimeout
        let heldProfile = callsExperience ? current.profile?["id"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } : nil
        let clock = service.environment.clock
        let waitStarted = clock.now()
        if let heldProfile {
            guard await service.profileCalls.acquire(heldProfile, within: budget) else {
                logger.warning("Experience call gave up waiting for the profile's earlier call", metadata: ["method": "\(method)"])
                return EventResult(outcome: .timedOut(after: budget))
            }
        }
        defer { if let heldProfile { service.profileCalls.release(heldProfile) } }
        // The service's one Experience circuit (on the delivery engine) admits the call or
        // makes it fail fast; an admitted call reports how it went.
        let admitted = callsExperience && running.delivery.admitExperienceCall()
        let failFast = callsExperience && !admitted
        let payloadText: String
        let requestText: String
        do {
            payloadText = try JSONValue.object(payload).jsonText()
            // What is left of the budget after waiting for the profile.
            let remaining = budget.inMilliseconds - max(0, clock.now() - waitStarted)
            requestText = try requestScope(profile: current.profile, failFast: failFast, budgetMilliseconds: remaining).jsonText()
        } catch {
            if admitted { running.delivery.recordExperienceOutcome(nil) }
            throw .bridgeError("\(method) payload cannot be serialized: \(error)")
        }
        let runtime = running.pool.engineForAsyncCall()
        let started = DispatchTime.now().uptimeNanoseconds
        let answer: JSONValue
        do {
            answer = try await RequestLogging.$requestId.withValue(options.requestId) {
                try await runtime.channel.request(
                    BridgeContract.Service.call, arguments: [.string(method), .json(payloadText), .json(requestText)], on: runtime.engine)
            }.value
        } catch {
            if admitted { running.delivery.recordExperienceOutcome(nil) }
            if let error = error as? OptimizationError {
                if case .notInitialized = error, !service.isRunning { throw .shutDown }
                throw error
            }
            throw .bridgeError("\(error)")
        }
        if admitted {
            let isOpen = running.delivery.recordExperienceOutcome(answer["experience"])
            service.metrics.circuit("experience", isOpen: isOpen)
        }
        guard answer["accepted"]?.boolValue == true else {
            report(blocked: answer["blocked"], method: method)
            service.metrics.event(method, accepted: false)
            return EventResult(outcome: .blocked(.consent))
        }
        service.metrics.event(method, accepted: true)
        var outcome = EventOutcome.accepted
        var data: JSONValue?
        if let experience = answer["experience"] {
            let mapped = Self.outcome(of: experience, budget: budget)
            outcome = mapped
            service.metrics.experience(mapped, nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            if mapped == .delivered, let answered = experience["data"] {
                data = answered
                adopt(answered)
            } else if mapped != .delivered {
                logger.warning("Experience call did not succeed; the request keeps its selections", metadata: ["method": "\(method)", "outcome": "\(mapped)"])
            }
        }
        if let insights = answer["insights"], insights.arrayValue?.isEmpty == false {
            do {
                service.metrics.queueDepth.record(try running.delivery.enqueue(insights))
            } catch .notInitialized {
                throw .shutDown
            }
        }
        return EventResult(outcome: outcome, event: answer["events"]?[0], data: data)
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

    private func adopt(_ data: JSONValue) {
        let selections = data["selectedOptimizations"].flatMap { try? SelectedOptimizations(json: $0) }
        state.withLock { state in
            if let profile = data["profile"], profile["id"]?.stringValue != nil { state.profile = profile }
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
