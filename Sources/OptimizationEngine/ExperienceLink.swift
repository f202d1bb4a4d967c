import OptimizationDelivery
import JavaScriptHost
import Logging
import OptimizationJSON
import OrderedCollections
import Synchronization
import HostPlatform

/// The Swift end of `bridge/experience-link.js` for one client engine: the visitor's built
/// Experience events go from the shared core into a Swift `ExperienceQueue`, which orders and
/// sends them; the engine builds each upsert and reads each answer (JavaScript decides, Swift
/// delivers).
///
/// Registers, before `__bridge.initialize`:
/// - `__nativeExperienceAccept(eventJSON, profileId | null)` → a ticket (> 0: the sender waits
///   for its flight's answer), 0 (stays queued), -1 (delivery disabled), or JSON text
///   `{"ticket": n, "released": [...]}` when the cap released earlier senders. With a durable
///   outbox the event is stored first; when that fails the native throws, so the event method
///   rejects and publishes nothing (``lastStoreFailure`` holds why).
/// - `__nativeExperiencePurge()` → JSON array of released tickets: consent withdrawn, every
///   queued event is discarded.
///
/// As the queue's `ExperienceFlightHandler` it calls `__bridge.experienceRequest`,
/// `__bridge.experienceAnswered` and `__bridge.releaseExperienceWaiters` on the engine, outside
/// any engine call of its own making (the queue never calls it from inside a native).
///
/// **Threading.** The natives run inside engine calls, under the engine's lock, and only call the
/// (thread-safe) queue. The handler's calls take the engine's lock like any caller.
package final class ExperienceLink: ExperienceFlightHandler {
    package let queue: ExperienceQueue
    private let engine = Mutex<JavaScriptEngine?>(nil)
    private let storeFailure = Mutex<OutboxError?>(nil)
    private let logger: Logger

    package init(queue: ExperienceQueue, logger: Logger) {
        self.queue = queue
        self.logger = logger
    }

    /// Registers the natives on `engine` and becomes its queue's handler.
    package func install(on engine: JavaScriptEngine) throws {
        try engine.register(BridgeContract.Native.experienceAccept) { [self] arguments throws(ExperienceHandoffError) in
            try accept(arguments)
        }
        try engine.register(BridgeContract.Native.experiencePurge) { [queue] _ in
            .string(Self.ticketsJSON(queue.purge()))
        }
        self.engine.withLock { $0 = engine }
        queue.attach(self)
    }

    /// Stops calling the engine (it is closing); later flights fail and stay queued.
    package func detach() {
        queue.attach(nil)
        engine.withLock { $0 = nil }
    }

    /// The error of the most recent store that failed (nil while none has).
    package var lastStoreFailure: OutboxError? {
        storeFailure.withLock { $0 }
    }

    // MARK: ExperienceFlightHandler

    package func request(carrying events: [String]) throws -> FetchRequest {
        guard let engine = engine.withLock({ $0 }) else { throw ExperienceHandoffError(message: "the engine is closed") }
        var eventsJSON = "["
        for (index, event) in events.enumerated() {
            if index > 0 { eventsJSON += "," }
            eventsJSON += event
        }
        eventsJSON += "]"
        let text = try engine.call(BridgeContract.Visitor.experienceRequest, .string(eventsJSON)).stringValue ?? ""
        let value = try JSONValue(jsonText: text)
        guard let url = value["url"]?.stringValue else { throw ExperienceHandoffError(message: "the engine built a request without a URL") }
        var headers: [String: String] = [:]
        for (name, header) in value["headers"]?.objectValue ?? [:] {
            if let header = header.stringValue { headers[name] = header }
        }
        return FetchRequest(url: url, method: value["method"]?.stringValue ?? "POST", headers: headers, body: value["body"]?.stringValue)
    }

    package func answered(_ answer: ExperienceFlightAnswer) {
        var report: OrderedDictionary<String, JSONValue> = [
            "disposition": .string(answer.disposition.rawValue),
            "tickets": .array(answer.tickets.map { .number(JSONNumber(Int(clamping: $0))) }),
            "status": .number(JSONNumber(answer.status)),
            "reason": .string(answer.reason),
        ]
        if let response = answer.response {
            report["headers"] = .object(OrderedDictionary(uniqueKeysWithValues: response.headers.map { ($0.key, JSONValue.string($0.value)) }))
            report["body"] = .string(response.body)
        }
        if let failure = answer.failure { report["failure"] = .string(failure) }
        if answer.timedOut { report["timedOut"] = true }
        call(BridgeContract.Visitor.experienceAnswered, .string((try? JSONValue.object(report).jsonText()) ?? "{}"))
    }

    package func released(tickets: [UInt64]) {
        guard !tickets.isEmpty else { return }
        call(BridgeContract.Visitor.releaseExperienceWaiters, .string(Self.ticketsJSON(tickets)))
    }

    // MARK: Internals

    private func call(_ function: BridgeFunction, _ argument: JavaScriptValue) {
        guard let engine = engine.withLock({ $0 }) else { return }
        do {
            try engine.call(function, argument)
        } catch {
            logger.debug("\(function.path) failed", metadata: ["error": "\(error)"])
        }
    }

    /// `__nativeExperienceAccept(eventJSON, profileId | null)`.
    private func accept(_ arguments: [JavaScriptValue]) throws(ExperienceHandoffError) -> JavaScriptValue {
        guard let text = arguments.first?.stringValue else { throw .init(message: "an Experience event must be JSON text") }
        let acceptance: ExperienceQueue.Acceptance
        do {
            acceptance = try queue.accept(eventJSON: text, profileId: arguments.count > 1 ? arguments[1].stringValue : nil)
        } catch {
            if case .notStored(let failure) = error { storeFailure.withLock { $0 = failure } }
            throw .init(message: "\(error)")
        }
        let ticket: Int
        switch acceptance.disposition {
        case .awaitsAnswer(let id): ticket = Int(clamping: id)
        case .queued: ticket = 0
        case .refused: ticket = -1
        }
        guard !acceptance.released.isEmpty else { return .number(Double(ticket)) }
        return .string(#"{"ticket":"# + String(ticket) + #","released":"# + Self.ticketsJSON(acceptance.released) + "}")
    }

    private static func ticketsJSON(_ tickets: [UInt64]) -> String {
        "[" + tickets.map(String.init).joined(separator: ",") + "]"
    }
}

/// Why `__nativeExperienceAccept` refused an event, or a request could not be built.
package struct ExperienceHandoffError: Error, Sendable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}
