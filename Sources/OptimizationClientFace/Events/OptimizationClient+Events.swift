import OptimizationDelivery
import JavaScriptHost
import OrderedCollections
import OptimizationJSON
import OptimizationContent
import OptimizationEngine

// The event API of OptimizationClient.
//
// Threading: every method is safe from any thread or task. The gate, the event build and the
// publication on ``OptimizationClient/events`` / ``OptimizationClient/blockedEvents`` happen
// synchronously inside the engine call (under the engine's lock); the async methods then resume
// once the shared core settles the call (for events queued offline that is before the engine
// call returns). One client runs one JavaScript VM, so calls on one client are serialized.
//
// Errors: before `initialize` (or after `destroy()`) every async method throws
// `OptimizationError/notInitialized`; a payload the core rejects, or any failure inside the
// engine, throws `OptimizationError/bridgeError(_:)` with the core's message (its validation
// messages); with a storage directory, an event the durable outbox could not store (a full disk)
// throws `OptimizationError/eventNotStored(_:)` and is neither queued nor published.
//
// Results (`EventResult`, the same type `OptimizationRequest` answers with): a call consent
// does not allow returns `.blocked(.consent)` and is reported once on
// ``OptimizationClient/blockedEvents``; a repeated `trackCurrentScreen` returns
// `.blocked(.duplicate)`. Delivery (<doc:DeliveryGuarantees>): an online Experience call
// resumes when its request finished (`.delivered`, with the answer in `data`) or the event stays
// queued for a retry (`.accepted`); when the API refused its batch (a 4xx) or Experience
// delivery is disabled (401/403/404) it returns `.refused(status:code:reason:)`. A failed
// request never fails the call: the event is retried.
extension OptimizationClient {
    // MARK: Streams and state

    /// Every event the engine accepted (Experience and Insights), as published on the core's
    /// event stream: the wire event, plus `optimization` when a view or click carried a live
    /// `optimizationContextId` (the delivered payload never has it).
    ///
    /// Each access returns a NEW stream that receives only events accepted after it was created
    /// (no replay). It keeps receiving across a re-`initialize`, and finishes on ``destroy()``.
    /// Up to 10 000 unread events are buffered per stream (the oldest are dropped beyond that);
    /// stop iterating to unsubscribe.
    public var events: AsyncStream<JSONValue> {
        eventBroadcaster.makeStream()
    }

    /// Every call that consent blocked, reported exactly once each
    /// (`reason` `"consent"`, the core method name, and the call's payload in `args`).
    /// Same stream semantics as ``events``.
    public var blockedEvents: AsyncStream<BlockedEvent> {
        blockedEventBroadcaster.makeStream()
    }

    /// The engine's current state (consent, persistence consent, what is possible and known).
    /// `OptimizationState/empty` before `initialize` and after ``destroy()``. Thread-safe;
    /// updated synchronously whenever the core's state changes.
    public var state: OptimizationState {
        currentRuntime?.channel.state ?? .empty
    }

    /// Tells the engine whether the network is reachable (default: online). Offline, Experience
    /// events are queued (in memory up to `QueuePolicy/offlineMaxEvents`: without an outbox the
    /// oldest are dropped beyond it, with one the rest waits on disk) and
    /// nothing is sent; Insights events keep batching. Going from offline to online ends the
    /// backoff waits and immediately sends both queues (Insights first; an open Insights circuit
    /// still waits for its window). A Linux service without a reachability monitor can leave it
    /// online: failed sends are retried anyway. Works before `initialize` too (the next engine
    /// starts in that state). Thread-safe, synchronous; the sends themselves run in the
    /// background (await ``flush()`` to wait for them).
    public func setOnline(_ isOnline: Bool) {
        self.isOnline.withLock { $0 = isOnline }
        currentRuntime?.insights?.queue.setOnline(isOnline)
        currentRuntime?.experience?.queue.setOnline(isOnline)
        callSync(BridgeContract.Visitor.setOnline, .bool(isOnline))
    }

    // MARK: Event calls

    /// Sends one event call through the engine's pipeline (`EventRecording`, whose typed
    /// methods the client offers: `identify`, `page`, `screen`, `track`, `trackView`,
    /// `trackClick`, `trackHover`, `trackFlagView`). An Experience event the API did not take
    /// stays queued for a retry (`EventOutcome.accepted`).
    /// - Throws: `OptimizationError/notInitialized`, `OptimizationError/eventNotStored(_:)`,
    ///   `OptimizationError/bridgeError(_:)` for an invalid payload.
    public func record(_ method: EventMethod, payload: OrderedDictionary<String, JSONValue>) async throws(OptimizationError) -> EventResult {
        try await emit(BridgeContract.Visitor.function(for: method), .object(payload))
    }

    /// Reports the current screen, de-duplicated: the screen is sent only when its key
    /// (`routeKey ?? name`) differs from the last ACCEPTED one (and none with that key is in
    /// flight); a duplicate returns `accepted` false without being reported as blocked. A call
    /// blocked by consent (the `screen` gate) is reported once on ``blockedEvents`` with method
    /// `trackCurrentScreen` and does not remember its key.
    /// - Throws: `OptimizationError/notInitialized`, `OptimizationError/bridgeError(_:)`.
    @discardableResult
    public func trackCurrentScreen(
        name: String, properties: OrderedDictionary<String, JSONValue> = [:], routeKey: String? = nil
    ) async throws(OptimizationError) -> EventResult {
        try await emit(BridgeContract.Visitor.trackCurrentScreen, .object(EventPayloads.screen(name: name, properties: properties, routeKey: routeKey)))
    }

    /// Fire-and-forget ``trackView(_:)`` for the view-tracking controller: gate, build and
    /// publication happen before this returns; the result is ignored (a failure is logged
    /// without the payload). No-op before `initialize`. Synchronous, thread-safe.
    package func submitView(_ payload: TrackViewPayload) {
        guard let runtime = currentRuntime else { return }
        runtime.channel.submit(
            BridgeContract.Visitor.function(for: .trackView), payload: payload.jsonValue, on: runtime.engine, callTime: environment.clock.now())
    }

    /// Fire-and-forget ``trackClick(_:)``; see ``submitView(_:)``.
    package func submitClick(_ payload: TrackClickPayload) {
        guard let runtime = currentRuntime else { return }
        runtime.channel.submit(
            BridgeContract.Visitor.function(for: .trackClick), payload: payload.jsonValue, on: runtime.engine, callTime: environment.clock.now())
    }

    // MARK: Test hooks

    /// Events waiting in the engine's queues, or nil before `initialize` (tests and debugging).
    func queueSizes() -> (experience: Int, insights: Int)? {
        guard let runtime = currentRuntime, let insights = runtime.insights?.queue.count,
              let experience = runtime.experience?.queue.count
        else { return nil }
        return (experience, insights)
    }

    // MARK: Internals

    private func emit(_ function: BridgeFunction, _ payload: JSONValue) async throws(OptimizationError) -> EventResult {
        guard let runtime = currentRuntime else { throw .notInitialized }
        // The call carries its time: the events are built without asking the clock. When the
        // outbox could not store the accepted event the call fails with its reason
        // (`OptimizationError.eventNotStored`: the channel reads the failure's code).
        let settlement = try await runtime.channel.request(function, payload: payload, on: runtime.engine, callTime: environment.clock.now())
        return Self.result(of: settlement.value, event: settlement.emitted.first)
    }

    /// The `EventResult` of the bridge's settled emission `{accepted, data?, refused?, duplicate?}`
    /// and the first event the call emitted.
    static func result(of emission: JSONValue, event: JSONValue?) -> EventResult {
        guard emission["accepted"]?.boolValue == true else {
            return EventResult(outcome: .blocked(emission["duplicate"]?.boolValue == true ? .duplicate : .consent))
        }
        if let refused = emission["refused"] {
            return EventResult(
                outcome: .refused(
                    status: refused["status"]?.intValue ?? 0, code: refused["code"]?.stringValue,
                    reason: refused["reason"]?.stringValue ?? "the API refused the event"),
                event: event)
        }
        let data = emission["data"].flatMap { $0.isNull ? nil : $0 }
        return EventResult(outcome: data == nil ? .accepted : .delivered, event: event, data: data)
    }

    /// Calls a synchronous bridge method; a failure is logged (never with visitor data).
    @discardableResult
    func callSync(_ function: BridgeFunction, _ arguments: JavaScriptValue...) -> JavaScriptValue? {
        guard let runtime = currentRuntime else { return nil }
        do {
            return try runtime.engine.call(function, arguments: arguments)
        } catch {
            environment.logger.error("\(function.path) failed", metadata: ["error": "\(error)"])
            return nil
        }
    }
}

/// The production sink of the view-tracking controller: views and clicks go through the
/// engine's consent gate and event pipeline (``OptimizationClient/submitView(_:)``).
extension OptimizationClient: ViewEventSink {}

extension OptimizationClient: EventRecording {}
