import OptimizationDelivery
import JavaScriptHost
import Logging
import OptimizationJSON
import Synchronization

/// What an async bridge call settled with.
package struct BridgeSettlement: Sendable {
    /// The settled value (`null` for calls that settle without one).
    package var value: JSONValue
    /// The events the call emitted (also published on ``BridgeChannel/events``), in order.
    package var emitted: [JSONValue]
}

/// The Swift end of the bridge's async calls and push-backs for one engine (one
/// ``OptimizationRuntime``): `__nativeSettle`, `__nativeOnEventEmitted`, `__nativeOnEventBlocked`
/// `__nativeOnStateChange` and `__nativeOnFlagValueChanged` (``FlagObservers``) (JSRuntime/README.md).
///
/// **Threading.** The native functions run on whatever thread is inside the engine, while it
/// holds the engine's lock; they only update `Mutex`-guarded state, resume continuations and
/// yield into broadcasters, never block or call back into the engine. ``request(_:payload:on:)``
/// may be called from any task; the bridge settles each request exactly once, and a request
/// still pending when the channel closes fails with `OptimizationError.notInitialized`.
package final class BridgeChannel: Sendable {
    /// Accepted events as published on the bridge's event stream.
    package let events: EventBroadcaster<JSONValue>
    /// Calls blocked by consent.
    package let blockedEvents: EventBroadcaster<BlockedEvent>
    /// Flag subscriptions (`__nativeOnFlagValueChanged`); finished on ``close()``.
    package let flags = FlagObservers()
    /// Where the delivery queues' reports go (the client's Swift queues report through it).
    package let queueEvents: QueueEventRelay
    /// The state's selections, prepared for resolutions without explicit selections.
    package let selections = CurrentSelections()

    /// A request between its call and its settle.
    private enum Waiter {
        /// Registered; its caller has not started waiting (the call is still running, or it
        /// returned without an outcome and the caller is about to wait).
        case pending
        /// Settled through `__nativeSettle` before its caller started waiting.
        case settled(Result<BridgeDocument, any Error>)
        /// Its caller waits.
        case waiting(CheckedContinuation<BridgeDocument, any Error>)
    }

    private struct Requests {
        var nextId = 0
        var waiting: [String: Waiter] = [:]
        var closed = false
    }

    private let requests = Mutex(Requests())
    /// Why the Experience queue last failed to store an event (``readExperienceStoreFailures(from:)``).
    private let experienceStoreFailure = Mutex<(@Sendable () -> OutboxError?)?>(nil)
    private let currentState = Mutex(OptimizationState.empty)
    private let logger = Mutex<Logger?>(nil)
    /// The ``request(_:arguments:on:)`` call that holds the engine's lock now (nil outside one):
    /// the events it emitted and its outcome when `__nativeSettle` reported it inside the call.
    private struct CallInProgress {
        var id: String
        var emitted: [JSONValue] = []
        var settled: Result<BridgeDocument, any Error>?
    }

    private let callInProgress = Mutex<CallInProgress?>(nil)

    /// Prefix of request ids whose result nobody awaits (``submit(_:payload:on:)``).
    private static let fireAndForgetPrefix = "f"

    /// Called synchronously with every new state, inside the engine call that changed it.
    package let stateObserver: (@Sendable (OptimizationState) -> Void)?

    package init(
        events: EventBroadcaster<JSONValue> = .init(), blockedEvents: EventBroadcaster<BlockedEvent> = .init(),
        queueEvents: QueueEventRelay = .init(),
        stateObserver: (@Sendable (OptimizationState) -> Void)? = nil
    ) {
        self.events = events
        self.blockedEvents = blockedEvents
        self.queueEvents = queueEvents
        self.stateObserver = stateObserver
    }

    /// The last state the bridge pushed (``OptimizationState/empty`` before the first push).
    package var state: OptimizationState {
        currentState.withLock { $0 }
    }

    /// Number of requests awaiting their settle (for tests).
    package var pendingRequestCount: Int {
        requests.withLock { $0.waiting.count }
    }

    /// Registers the native push-back functions on `engine`. Call before `__bridge.initialize`.
    package func install(on engine: JavaScriptEngine) throws {
        logger.withLock { $0 = engine.configuration.logger }
        try flags.install(on: engine)
        try engine.register(BridgeContract.Native.settle) { [self] arguments in
            settle(arguments)
            return .undefined
        }
        try engine.register(BridgeContract.Native.onEventEmitted) { [self] arguments in
            guard let text = arguments.first?.stringValue, let event = try? JSONValue(jsonText: text) else {
                log(.error, "the engine pushed an event that is not JSON")
                return .undefined
            }
            publish(event)
            return .undefined
        }
        try engine.register(BridgeContract.Native.onEventBlocked) { [self] arguments in
            guard let text = arguments.first?.stringValue, let value = try? JSONValue(jsonText: text),
                  let method = value["method"]?.stringValue
            else {
                log(.error, "the engine pushed a blocked event that is not valid")
                return .undefined
            }
            blockedEvents.yield(BlockedEvent(
                reason: value["reason"]?.stringValue ?? "consent", method: method, args: value["args"]?.arrayValue ?? []))
            return .undefined
        }
        try engine.register(BridgeContract.Native.onStateChange) { [self] arguments in
            guard let text = arguments.first?.stringValue, let value = try? JSONValue(jsonText: text) else {
                log(.error, "the engine pushed a state that is not JSON")
                return .undefined
            }
            let state = OptimizationState(bridgeState: value)
            selections.update(state.selectedOptimizations)
            currentState.withLock { $0 = state }
            stateObserver?(state)
            return .undefined
        }
    }

    /// Calls the async bridge function `function(payload, requestId)` and waits for its settle.
    /// With `callTime` (milliseconds since the epoch on the engine's clock) the call is
    /// `function(payload, requestId, callTime)`: an event call builds its events at that time
    /// without asking the host's clock.
    /// - Returns: the value the bridge settled with and the events the call emitted.
    /// - Throws: `OptimizationError.bridgeError` with the bridge's message (validation,
    ///   rejected promise) or a host failure; `OptimizationError.notInitialized` when the
    ///   channel is (or gets) closed before the request settles.
    package func request(
        _ function: BridgeFunction, payload: JSONValue, on engine: JavaScriptEngine, callTime: Double? = nil
    ) async throws(OptimizationError) -> BridgeSettlement {
        let payloadText: String
        do {
            payloadText = try payload.jsonText()
        } catch {
            throw .bridgeError("\(function.name) payload cannot be serialized: \(error)")
        }
        let (document, emitted) = try await requestDocument(function, arguments: [.json(payloadText)], on: engine, callTime: callTime)
        return BridgeSettlement(value: document.value, emitted: emitted)
    }

    /// Calls the async JavaScript function `function` with `arguments` plus a fresh request id (its
    /// last argument) and waits for its settle. An outcome the function knows at once comes back
    /// as its return value (`[ok, value, emitted?]` JSON text: one crossing); a later one through
    /// `__nativeSettle`. Errors as ``request(_:payload:on:)``.
    package func request(_ function: BridgeFunction, arguments: [JavaScriptValue], on engine: JavaScriptEngine) async throws(OptimizationError) -> BridgeSettlement {
        let (document, emitted) = try await requestDocument(function, arguments: arguments, on: engine)
        return BridgeSettlement(value: document.value, emitted: emitted)
    }

    /// ``request(_:arguments:on:)`` with the settled value read in place (``BridgeDocument``):
    /// the caller builds trees only for the parts it reads. An outcome the function knows at
    /// once returns without suspending the caller.
    package func requestDocument(
        _ function: BridgeFunction, arguments: [JavaScriptValue], on engine: JavaScriptEngine, callTime: Double? = nil
    ) async throws(OptimizationError) -> (document: BridgeDocument, emitted: [JSONValue]) {
        let id = requests.withLock { state -> String? in
            if state.closed { return nil }
            state.nextId += 1
            let id = "r\(state.nextId)"
            state.waiting[id] = .pending
            return id
        }
        guard let id else { throw .notInitialized }
        let (immediate, emitted) = engine.withExclusiveAccess { () -> (Result<BridgeDocument, any Error>?, [JSONValue]) in
            callInProgress.withLock { $0 = CallInProgress(id: id) }
            var outcome: Result<BridgeDocument, any Error>?
            do {
                let returned = try engine.call(function, arguments: arguments + [.string(id)] + (callTime.map { [.number($0)] } ?? []))
                if let text = returned.stringValue { outcome = settlement(returnedBy: function, text) }
            } catch {
                outcome = .failure(Self.hostError(error))
            }
            let call = callInProgress.withLock { call in
                defer { call = nil }
                return call
            }
            // A settle through `__nativeSettle` inside the call wins over a later throw.
            return (call?.settled ?? outcome, call?.emitted ?? [])
        }
        do {
            let value: BridgeDocument
            if let immediate {
                // Known at once: the caller continues on its own thread, without suspending.
                requests.withLock { _ = $0.waiting.removeValue(forKey: id) }
                value = try immediate.get()
            } else {
                value = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<BridgeDocument, any Error>) in
                    let ready = requests.withLock { state -> Result<BridgeDocument, any Error>? in
                        switch state.waiting[id] {
                        case .pending?:
                            state.waiting[id] = .waiting(continuation)
                            return nil
                        case .settled(let outcome)?:
                            state.waiting.removeValue(forKey: id)
                            return outcome
                        case .waiting?, nil:
                            // Removed by close() (a request waits only once).
                            return .failure(OptimizationError.notInitialized)
                        }
                    }
                    if let ready { continuation.resume(with: ready) }
                }
            }
            return (value, emitted)
        } catch let error as OptimizationError {
            throw error
        } catch {
            throw .bridgeError("\(error)")
        }
    }

    /// Calls the async bridge function `function(payload, requestId)` without waiting for its result:
    /// gate, build and publish happen before this returns. A failure is logged (message only,
    /// never the payload).
    package func submit(_ function: BridgeFunction, payload: JSONValue, on engine: JavaScriptEngine, callTime: Double? = nil) {
        let id = requests.withLock { state -> String in
            state.nextId += 1
            return "\(Self.fireAndForgetPrefix)\(state.nextId)"
        }
        do {
            let returned = try engine.call(function, arguments: [.json(try payload.jsonText()), .string(id)] + (callTime.map { [.number($0)] } ?? []))
            if let text = returned.stringValue, case .failure(let error) = settlement(returnedBy: function, text) {
                log(.warning, "a submitted event failed: \(error)")
            }
        } catch {
            // Never the payload: an invalid-JSON error would quote it.
            let reason: String
            if case JavaScriptError.invalidJSONArgument = error { reason = "the payload is not valid JSON" } else { reason = "\(Self.hostError(error))" }
            log(.warning, "\(function.name) could not be submitted: \(reason)")
        }
    }

    /// Reads the `[ok, value, emitted?]` text an async function returned when its outcome was
    /// known at once (indexed, not parsed: the value is read in place), and publishes the emitted
    /// events on ``events`` (and to the call in progress).
    private func settlement(returnedBy function: BridgeFunction, _ text: String) -> Result<BridgeDocument, any Error> {
        guard let answer = BridgeDocument(jsonText: text), let ok = answer[0]?.boolValue, let value = answer[1] else {
            return .failure(OptimizationError.bridgeError("\(function.name) returned an outcome that is not [ok, value]"))
        }
        if let emitted = answer[2]?.elements {
            for event in emitted { publish(event.value) }
        }
        if ok { return .success(value) }
        return .failure(failure(value.stringValue ?? "\(function.name) failed", code: answer[3]?.stringValue))
    }

    /// Where a failure of code ``BridgeFailureCode/experienceEventNotStored`` finds the store's
    /// error: such a failure then throws ``OptimizationError/eventNotStored(_:)`` with it (as a
    /// bridge error with the message while `source` answers nil, or before this is called).
    package func readExperienceStoreFailures(from source: @escaping @Sendable () -> OutboxError?) {
        experienceStoreFailure.withLock { $0 = source }
    }

    /// The error of a failed call: its message, and the typed error its code names.
    private func failure(_ message: String, code: String?) -> OptimizationError {
        switch code.flatMap(BridgeFailureCode.init(rawValue:)) {
        case .experienceEventNotStored?:
            if let stored = experienceStoreFailure.withLock({ $0 })?() { return .eventNotStored(stored) }
        case .profileIdRequired?:
            return .profileIdRequired(method: "")
        case nil:
            break
        }
        return .bridgeError(message)
    }

    private func publish(_ event: JSONValue) {
        callInProgress.withLock { $0?.emitted.append(event) }
        events.yield(event)
    }

    /// Fails every pending request with `OptimizationError.notInitialized` and refuses new
    /// ones; finishes every flag stream. Idempotent.
    package func close() {
        flags.finishAll()
        let pending = requests.withLock { state -> [CheckedContinuation<BridgeDocument, any Error>] in
            state.closed = true
            defer { state.waiting.removeAll() }
            return state.waiting.values.compactMap { waiter in
                if case .waiting(let continuation) = waiter { return continuation }
                return nil
            }
        }
        for continuation in pending {
            continuation.resume(throwing: OptimizationError.notInitialized)
        }
    }

    // MARK: Internals

    private func settle(_ arguments: [JavaScriptValue]) {
        guard arguments.count >= 3, let id = arguments[0].stringValue else {
            log(.error, "\(BridgeContract.Native.settle) called with invalid arguments")
            return
        }
        let ok = arguments[1].boolValue ?? false
        let text = arguments[2].stringValue ?? arguments[2].jsonText ?? "null"
        let outcome: Result<BridgeDocument, any Error>
        if ok {
            if let value = BridgeDocument(jsonText: text) {
                outcome = .success(value)
            } else {
                outcome = .failure(OptimizationError.bridgeError("the bridge settled with a result that is not JSON"))
            }
        } else {
            outcome = .failure(failure(text, code: arguments.count > 3 ? arguments[3].stringValue : nil))
        }
        // The call that is still inside the engine resumes its caller itself, after it has
        // collected the events it emitted.
        let deferred = callInProgress.withLock { call -> Bool in
            guard call?.id == id else { return false }
            call?.settled = outcome
            return true
        }
        if deferred { return }
        let continuation = requests.withLock { state -> CheckedContinuation<BridgeDocument, any Error>?? in
            switch state.waiting[id] {
            case .waiting(let continuation)?:
                state.waiting.removeValue(forKey: id)
                return .some(continuation)
            case .pending?:
                // Its caller has not started waiting yet: it finds the outcome when it does.
                state.waiting[id] = .settled(outcome)
                return .some(nil)
            case .settled?, nil:
                return nil
            }
        }
        guard let continuation else {
            if id.hasPrefix(Self.fireAndForgetPrefix) {
                if !ok { log(.warning, "a submitted event failed: \(text)") }
            } else {
                log(.debug, "\(BridgeContract.Native.settle) for an unknown or already settled request", metadata: ["requestId": "\(id)"])
            }
            return
        }
        continuation?.resume(with: outcome)
    }

    private static func hostError(_ error: any Error) -> OptimizationError {
        if let error = error as? OptimizationError { return error }
        if case JavaScriptError.exception(let exception) = error { return .bridgeError(exception.message) }
        if case JavaScriptError.engineClosed = error { return .notInitialized }
        return .bridgeError("\(error)")
    }

    private func log(_ level: Logger.Level, _ message: String, metadata: Logger.Metadata? = nil) {
        logger.withLock { $0 }?.log(level: level, "\(message)", metadata: metadata)
    }
}
