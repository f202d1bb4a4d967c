import JavaScriptHost
import Logging
import OptimizationJSON
import Synchronization

/// The Swift end of `__nativeOnFlagValueChanged(subscriptionId, json)` for one engine: one
/// `AsyncStream` continuation per `__bridge.observeFlag` subscription.
///
/// **Threading.** The push-back runs on whatever thread is inside the engine (holding the
/// engine's lock); it only looks up a continuation under a short `Mutex` and yields, never
/// blocks. The mutex is never held while calling into the engine, so there is no lock-order
/// inversion with the engine's lock. ``finishAll()`` (engine teardown) finishes every stream
/// without calling back into the engine.
package final class FlagObservers: Sendable {
    /// Unread values one flag stream keeps before dropping its oldest.
    package static let bufferLimit = 1024

    private struct Subscriptions {
        var nextId = 0
        var continuations: [String: AsyncStream<JSONValue>.Continuation] = [:]
        var closed = false
    }

    private let subscriptions = Mutex(Subscriptions())

    package init() {}

    /// Number of live subscriptions (tests).
    package var count: Int {
        subscriptions.withLock { $0.continuations.count }
    }

    /// Registers `__nativeOnFlagValueChanged` on `engine`. Call before `__bridge.initialize`.
    package func install(on engine: JavaScriptEngine) throws {
        try engine.register(BridgeContract.Native.onFlagValueChanged) { [self] arguments in
            guard arguments.count >= 2, let id = arguments[0].stringValue else { return .undefined }
            let text = arguments[1].stringValue ?? arguments[1].jsonText ?? "null"
            let value = (try? JSONValue(jsonText: text)) ?? .null
            subscriptions.withLock { $0.continuations[id] }?.yield(value)
            return .undefined
        }
    }

    /// A stream of the distinct values of flag `name`, starting with the current one (pushed
    /// synchronously by `__bridge.observeFlag` before this returns). It finishes when
    /// ``finishAll()`` runs; when its consumer stops, the bridge subscription is removed.
    package func stream(name: String, engine: JavaScriptEngine, logger: Logger) -> AsyncStream<JSONValue> {
        let (stream, continuation) = AsyncStream<JSONValue>.makeStream(bufferingPolicy: .bufferingNewest(Self.bufferLimit))
        let id = subscriptions.withLock { state -> String? in
            guard !state.closed else { return nil }
            state.nextId += 1
            let id = "flag-\(state.nextId)"
            state.continuations[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self, weak engine] _ in
            // Only a consumer that went away unsubscribes; a teardown already removed the id.
            guard let self, self.remove(id) else { return }
            _ = try? engine?.call(BridgeContract.Visitor.unobserveFlag, .string(id))
        }
        do {
            try engine.call(BridgeContract.Visitor.observeFlag, .string(id), .string(name))
        } catch {
            logger.error("\(BridgeContract.Visitor.observeFlag.path) failed", metadata: ["error": "\(error)"])
            continuation.finish()
        }
        return stream
    }

    /// Finishes every stream and refuses new ones. Idempotent.
    package func finishAll() {
        let finished = subscriptions.withLock { state -> [AsyncStream<JSONValue>.Continuation] in
            state.closed = true
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for continuation in finished {
            continuation.finish()
        }
    }

    /// Removes `id`; true when it was still registered.
    private func remove(_ id: String) -> Bool {
        subscriptions.withLock { $0.continuations.removeValue(forKey: id) != nil }
    }
}
