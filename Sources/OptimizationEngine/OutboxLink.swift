import OptimizationDelivery
import Foundation
import JavaScriptHost
import Logging
import OptimizationJSON
import Synchronization
import HostPlatform

/// A client's durable outbox (the OptimizationDelivery article “The durable outbox”): its two queues
/// (`ExperienceQueue`, `InsightsQueue`) store every accepted event in it themselves; this link
/// opens it, installs `__nativeOutboxPurge()` (consent withdrawn: every file is removed before
/// the withdrawing call returns) and applies the outbox's own drops (count, byte and time-to-live
/// bounds; already acknowledged on disk) to the queues through ``forwardDrops(_:)``.
///
/// **Threading.** The purge native runs inside an engine call and only calls the (thread-safe)
/// outbox. Drop reports are applied from a task, outside any engine call.
///
/// **Privacy.** Nothing of an event's content is ever logged.
package final class OutboxLink: Sendable {
    package let outbox: DurableOutbox
    private let logger: Logger

    package init(outbox: DurableOutbox, logger: Logger) {
        self.outbox = outbox
        self.logger = logger
    }

    /// Opens the outbox in `directory` for a link.
    /// - Throws: `OptimizationError.configError` naming the directory when it cannot be
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

    /// Registers `__nativeOutboxPurge` on `engine`. Call before `__bridge.initialize`.
    package func install(on engine: JavaScriptEngine) throws {
        try engine.register(BridgeContract.Native.outboxPurge) { [self] _ in
            do {
                try outbox.purge()
            } catch {
                logger.error("consent was withdrawn but the outbox could not be purged", metadata: ["error": "\(error)"])
            }
            return .undefined
        }
    }

    /// Starts applying the outbox's own drops (bounds, time to live) to the engine's queues:
    /// `removal` is called with the queue, the JSON array of `messageId`s and the reason.
    package func forwardDrops(_ removal: @escaping @Sendable (QueueEvent.Queue, String, String) throws -> Void) {
        outbox.forwardDrops(logger: logger, to: removal)
    }

    /// Releases the directory; what is undelivered stays on disk for the next start.
    package func close() {
        outbox.close()
    }
}
