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
    // MARK: The call

    /// Runs `body` in an `optimization.request` span for `method` (a child of the task's current
    /// span, current while `body` runs) and sets its outcome (`outcome` of the result) or its
    /// error; without a tracer (the no-op one) it runs `body` with no span.
    func traced<Value>(
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

    func call(
        _ event: EventMethod, _ payload: OrderedDictionary<String, JSONValue>, span: (any Span)?
    ) async throws(OptimizationError) -> EventResult {
        let running = try service.requireRunning()
        let method = event.rawValue
        // Whether the call goes to the Experience API is known before the engine builds it (the
        // profile's earlier call is awaited and the circuit asked first): the shared core's rule,
        // read as data (ExperienceRouting). Whether the call needs a profile id the shared core
        // decides (`profileIdRequired`).
        let route = service.experienceRouting.withLock { $0 }.route(method, payload: payload)
        let callsExperience = route != .insights
        let payloadText: String
        do {
            payloadText = try JSONValue.object(payload).jsonText()
        } catch {
            throw .bridgeError("\(method) payload cannot be serialized: \(error)")
        }
        guard let exchange = try await exchange(
            BridgeContract.Service.call, [.string(method), .json(payloadText)], method: method, callsExperience: callsExperience,
            sendsProfile: route == .experienceByPayload, running: running, span: span)
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
            try await hand(try insightsEvents(items, events: answer["events"]), running: running)
        }
        return EventResult(outcome: outcome, eventIn: answer["events"]?[0], data: data)
    }

    /// The Insights events that an answer's `insights` items name. Each item names its event in
    /// `events` by index (written once, handed on as the engine wrote it: no tree, no second
    /// serialization) and carries a profile only when it is not the request's (a sticky view's,
    /// as its Experience answer returned it). The request's profile went to the engine as its
    /// id alone and is not read back.
    /// - Throws: `OptimizationError/bridgeError(_:)` (counted as refused) for an item without an
    ///   event, a `messageId` or a profile.
    func insightsEvents(_ items: [BridgeDocument], events: BridgeDocument?) throws(OptimizationError) -> [InsightsEvent] {
        let request = state.withLock { ($0.profile?["id"]?.stringValue, $0.profileText) }
        return try items.map { item throws(OptimizationError) -> InsightsEvent in
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
    }

    /// Hands accepted Insights events on: to the shared outbox when the service has one (a
    /// replica claims and delivers them), else, or when the store is away, to this replica's
    /// queue.
    /// - Throws: `OptimizationError/shutDown` when the service's delivery has stopped.
    func hand(_ insights: [InsightsEvent], running: OptimizationService.Running) async throws(OptimizationError) {
        guard !insights.isEmpty else { return }
        if let relay = running.sharedOutbox {
            let events = insights.map { insight in
                OutboxEvent(
                    queue: .insights, messageId: insight.messageId, profileId: insight.profileId.isEmpty ? nil : insight.profileId,
                    consent: insight.consent, payload: Array(insight.itemJSON.utf8))
            }
            if await relay.store(events) { return }
        }
        do {
            service.metrics.queueDepth.record(try running.delivery.enqueue(insights))
        } catch .notInitialized {
            throw .shutDown
        }
    }

    /// The latency budget of this request's Experience calls.
    var budget: Duration { options.experienceTimeout ?? service.options.experienceTimeout }

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
    /// - Parameter sendsProfile: the engine receives the request's whole profile (a call the
    ///   Experience API gets by its payload, a sticky view, whose Insights event falls back to
    ///   it); otherwise only its id, all the shared core reads.
    /// - Parameter span: the call's `optimization.request` span, which gets the budget, the
    ///   profile wait and the engine wait; nil when not tracing.
    func exchange(
        _ function: BridgeFunction, _ arguments: [JavaScriptValue], method: String, callsExperience: Bool, sendsProfile: Bool = false,
        running: OptimizationService.Running, span: (any Span)?
    ) async throws(OptimizationError) -> (answer: BridgeDocument, experience: ExperienceCallOutcome?, started: UInt64)? {
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
                if case .profileIdRequired = error { throw .profileIdRequired(method: method) }
                throw error
            }
            throw .bridgeError("\(error)")
        }
        let experience = answer["experience"].map { ExperienceCallOutcome($0.value) }
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
    func experienceOutcome(
        of exchange: (answer: BridgeDocument, experience: ExperienceCallOutcome?, started: UInt64), method: String
    ) -> (EventOutcome, JSONValue?)? {
        guard let experience = exchange.experience else { return nil }
        let mapped = experience.eventOutcome(budget: budget)
        service.metrics.experience(mapped, nanoseconds: DispatchTime.now().uptimeNanoseconds - exchange.started)
        guard mapped == .delivered, let answered = experience.data else {
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

    func report(blocked: JSONValue?, method: String) {
        let event = BlockedEvent(
            reason: blocked?["reason"]?.stringValue ?? "consent", method: blocked?["method"]?.stringValue ?? method,
            args: blocked?["args"]?.arrayValue ?? [])
        logger.debug("blocked event payload", metadata: ["method": "\(method)", "args": "\((try? JSONValue.array(event.args).jsonText()) ?? "")"])
        service.blockedEventBroadcaster.yield(event)
    }
}
