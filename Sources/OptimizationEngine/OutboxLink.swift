import OptimizationDelivery
import EventOutbox
import Foundation
import JavaScriptHost
import Logging
import OptimizationJSON
import Synchronization

/// The Swift end of `bridge/outbox-link.js` for one client engine: the integration of a
/// ``DurableOutbox`` with the single-visitor client's delivery queues (the EventOutbox article
/// “The durable outbox”). The service's queues are Swift (`InsightsQueue`) and use the outbox
/// directly.
///
/// The engine's queues call, inside the engine call that accepts an event:
/// - `__nativeOutboxAppend(queue, messageId, profileId|null, consent, acceptedAtMs, payloadJSON)`:
///   the event is written (per the outbox's durability policy) and its sequence returned before
///   the accepting call goes on; when the write fails the function throws, the accepting call
///   fails and nothing is queued or acknowledged for the event (``lastAppendFailure`` then
///   holds the ``OutboxError``).
/// - `__nativeOutboxLoad(queue, afterSequence, limit)`: the next stored events of a queue, for
///   the queue's in-memory window over the backlog (`[{"sequence": n, "payload": …}]`).
/// - `__nativeOutboxRemoved(queue, messageIdsJSON, reason)`: events that left a queue for good
///   (delivered, refused, delivery disabled) are acknowledged.
/// - `__nativeOutboxPurge()`: consent withdrawn; every file is removed before the call returns.
///
/// Events the outbox drops by itself (its count, byte and time-to-live bounds; already
/// acknowledged on disk) are removed from the queues through ``forwardDrops(to:)`` and reported
/// as `offlineDrop` with the reason.
///
/// **Threading.** The native functions run inside engine calls, on the calling thread, under the
/// engine's lock; they only call the (thread-safe) outbox, never back into the engine. Drop
/// reports are applied from a task, outside any engine call.
///
/// **Privacy.** Nothing of an event's content is ever logged.
package final class OutboxLink: Sendable {
    package let outbox: DurableOutbox
    private let logger: Logger
    private let appendFailure = Mutex<OutboxError?>(nil)

    package init(outbox: DurableOutbox, logger: Logger) {
        self.outbox = outbox
        self.logger = logger
    }

    /// Opens the outbox in `directory` for a link.
    /// - Throws: ``OptimizationError/configError(_:)`` naming the directory when it cannot be
    ///   used (another process owns it, or it cannot be created).
    package static func open(
        directory: URL, configuration: OutboxConfiguration, clock: any HostClock, logger: Logger, fileSystem: any OutboxFileSystem
    ) throws(OptimizationError) -> OutboxLink {
        do {
            let outbox = try DurableOutbox(directory: directory, configuration: configuration, clock: clock, logger: logger, fileSystem: fileSystem)
            return OutboxLink(outbox: outbox, logger: logger)
        } catch {
            throw .configError("the outbox at \(directory.path) cannot be used: \(error)")
        }
    }

    /// Registers the native functions on `engine`. Call before the queues are created
    /// (`__bridge.initialize`): they use the outbox only when
    /// `__nativeOutboxAppend` exists then.
    package func install(on engine: JavaScriptEngine) throws {
        try engine.register(BridgeContract.Native.outboxAppend) { [self] arguments throws(OutboxError) in
            .number(Double(try append(arguments)))
        }
        try engine.register(BridgeContract.Native.outboxLoad) { [outbox] arguments in
            guard arguments.count >= 3, let queue = arguments[0].stringValue.flatMap(QueueEvent.Queue.init(rawValue:)),
                  let after = arguments[1].numberValue, let limit = arguments[2].numberValue, after >= 0, limit >= 0
            else { return .string("[]") }
            let records = outbox.pendingRecords(queue: queue, after: UInt64(after), limit: Int(min(limit, 1_000_000)))
            var text = "["
            for (index, record) in records.enumerated() {
                if index > 0 { text += "," }
                text += #"{"sequence":"# + String(record.sequence) + #","payload":"#
                text += String(decoding: record.payload, as: UTF8.self)
                text += "}"
            }
            return .string(text + "]")
        }
        try Self.installRemovalReports(on: engine) { [outbox] ids, _ in _ = outbox.acknowledge(messageIds: ids) }
        try engine.register(BridgeContract.Native.outboxPurge) { [self] _ in
            do {
                try outbox.purge()
            } catch {
                logger.error("consent was withdrawn but the outbox could not be purged", metadata: ["error": "\(error)"])
            }
            return .undefined
        }
    }

    /// Registers `__nativeOutboxRemoved(queue, messageIdsJSON, reason)` on `engine`: `report`
    /// gets the `messageId`s of the events that left a queue for good and the shared core's
    /// reason, inside the engine call (malformed arguments are ignored). Used by this link and by
    /// a service whose events are stored outside the engine (a shared outbox).
    package static func installRemovalReports(
        on engine: JavaScriptEngine, _ report: @escaping @Sendable (_ messageIds: [String], _ reason: String) -> Void
    ) throws {
        try engine.register(BridgeContract.Native.outboxRemoved) { arguments in
            guard arguments.count >= 2, let text = arguments[1].stringValue,
                  let ids = try? JSONValue(jsonText: text).arrayValue else { return .undefined }
            report(ids.compactMap(\.stringValue), arguments.count >= 3 ? arguments[2].stringValue ?? "" : "")
            return .undefined
        }
    }

    /// Starts applying the outbox's own drops (bounds, time to live) to the engine's queues:
    /// `removal` is called with the queue, the JSON array of `messageId`s and the reason.
    package func forwardDrops(_ removal: @escaping @Sendable (QueueEvent.Queue, String, String) throws -> Void) {
        outbox.forwardDrops(logger: logger, to: removal)
    }

    /// The error of the most recent append that failed (nil while none has). A call that failed
    /// because its event could not be stored reports this error: concurrent failures of the
    /// same disk all see one of them.
    package var lastAppendFailure: OutboxError? {
        appendFailure.withLock { $0 }
    }

    /// Releases the directory; what is undelivered stays on disk for the next start.
    package func close() {
        outbox.close()
    }

    /// `__nativeOutboxAppend(queue, messageId, profileId|null, consent, acceptedAtMs, payloadJSON)`.
    private func append(_ arguments: [JavaScriptValue]) throws(OutboxError) -> UInt64 {
        guard arguments.count >= 6, let queue = arguments[0].stringValue.flatMap(QueueEvent.Queue.init(rawValue:)),
              let messageId = arguments[1].stringValue, let payload = arguments[5].stringValue else {
            throw .invalidEvent("the engine pushed an event with invalid arguments")
        }
        do {
            return try outbox.append(OutboxEvent(
                queue: queue, messageId: messageId, profileId: arguments[2].stringValue,
                consent: arguments[3].boolValue ?? false, acceptedAt: arguments[4].numberValue, payload: Array(payload.utf8))).sequence
        } catch {
            appendFailure.withLock { $0 = error }
            logger.warning("an accepted event could not be stored; the call fails", metadata: ["error": "\(error)"])
            throw error
        }
    }
}
