import Foundation
import JavaScriptHost
import Logging

/// The single-visitor client's side of the durable outbox contract (docs/outbox.md): the engine
/// pushes every event its queues accept to `__nativeOutboxAppend` (written to disk before the
/// accepting call returns), every event that left a queue for good to `__nativeOutboxRemoved`
/// (acknowledged), and a consent withdrawal to `__nativeOutboxPurge` (every file removed before
/// the call returns). At start the events found on disk are queued again, ahead of new ones, with
/// their original bytes; events the outbox drops by itself (bounds, time to live) are removed from
/// the queues and reported as `offlineDrop` with a `reason`.
///
/// **Threading.** The push-backs run inside engine calls, on the calling thread, under the
/// engine's lock; they only call the (thread-safe) outbox, never back into the engine. Drop
/// reports are applied from a task, outside any engine call.
///
/// **Errors.** A failing append (a full disk) is logged at `warning` and the event stays in
/// memory only: the accepting call still succeeds. Nothing is ever logged of an event's content.
final class ClientOutbox: Sendable {
    let outbox: DurableOutbox
    private let logger: Logger

    /// Opens the outbox in `directory`.
    /// - Throws: ``OptimizationError/configError(_:)`` naming the directory when it cannot be
    ///   used (another process owns it, or it cannot be created).
    init(directory: URL, configuration: OutboxConfiguration, clock: any HostClock, logger: Logger) throws(OptimizationError) {
        do {
            outbox = try DurableOutbox(directory: directory, configuration: configuration, clock: clock, logger: logger)
        } catch {
            throw .configError("the outbox at \(directory.path) cannot be used: \(error)")
        }
        self.logger = logger
    }

    /// Registers the push-backs on `engine`. Call before `__bridge.initialize`: the bridge wires
    /// its queues to the outbox only when `__nativeOutboxAppend` exists.
    func install(on engine: JavaScriptEngine) throws {
        try engine.registerFunction("__nativeOutboxAppend") { [self] arguments in
            append(arguments)
            return .undefined
        }
        try engine.registerFunction("__nativeOutboxRemoved") { [outbox] arguments in
            guard arguments.count >= 2, let text = arguments[1].stringValue,
                  let ids = try? JSONValue(jsonText: text).arrayValue else { return .undefined }
            outbox.acknowledge(messageIds: ids.compactMap(\.stringValue))
            return .undefined
        }
        try engine.registerFunction("__nativeOutboxPurge") { [self] _ in
            do {
                try outbox.purge()
            } catch {
                logger.error("consent was withdrawn but the outbox could not be purged", metadata: ["error": "\(error)"])
            }
            return .undefined
        }
    }

    /// Queues the recovered events again (append order, both queues) and starts applying the
    /// outbox's drop reports to `engine`. Call once, right after `__bridge.initialize`.
    func start(on engine: JavaScriptEngine) {
        let records = outbox.recovery.records
        if !records.isEmpty {
            var items: [String] = []
            items.reserveCapacity(records.count)
            for record in records {
                let payload = String(decoding: record.payload, as: UTF8.self)
                switch record.queue {
                case .experience: items.append(#"{"queue":"experience","event":"# + payload + "}")
                case .insights: items.append(#"{"queue":"insights","item":"# + payload + "}")
                }
            }
            do {
                let restored = try engine.call("__bridge.restoreQueuedEvents", .json("[" + items.joined(separator: ",") + "]"))
                logger.info("queued the events recovered from the outbox", metadata: ["count": "\(restored.numberValue.map { Int($0) } ?? 0)"])
            } catch {
                logger.error("recovered outbox events could not be queued; they stay on disk", metadata: ["error": "\(error)"])
            }
        }
        outbox.forwardDrops(logger: logger) { queue, ids, reason in
            try engine.call("__bridge.removeQueuedEvents", .string(queue.rawValue), .json(ids), .string(reason))
        }
    }

    /// Releases the directory; what is undelivered stays on disk for the next start.
    func close() {
        outbox.close()
    }

    /// `__nativeOutboxAppend(queue, messageId, profileId|null, consent, acceptedAtMs, payloadJSON)`.
    private func append(_ arguments: [JavaScriptValue]) {
        guard arguments.count >= 6, let queue = arguments[0].stringValue.flatMap(QueueEvent.Queue.init(rawValue:)),
              let messageId = arguments[1].stringValue, let payload = arguments[5].stringValue else {
            logger.error("the engine pushed an outbox event with invalid arguments")
            return
        }
        do {
            try outbox.append(OutboxEvent(
                queue: queue, messageId: messageId, profileId: arguments[2].stringValue,
                consent: arguments[3].boolValue ?? false, acceptedAt: arguments[4].numberValue, payload: Array(payload.utf8)))
        } catch {
            logger.warning("outbox append failed; the event is kept in memory only", metadata: ["error": "\(error)"])
        }
    }
}
