import Logging
import OptimizationJSON

extension DurableOutbox {
    /// Hands every drop report (a bound or the time to live dropped events) to `remove`, once per
    /// queue it touches, with that queue's message ids as a JSON array and the reason
    /// (`OutboxDropReport/Reason`'s raw value), so the caller can take the same events out of
    /// its in-memory queue. Runs in a task until the outbox closes; a throwing `remove` (its
    /// engine already closed) is logged at `debug`. Consumes ``drops``: call at most once.
    package func forwardDrops(
        logger: Logger, to remove: @escaping @Sendable (_ queue: QueueEvent.Queue, _ messageIdsJSON: String, _ reason: String) throws -> Void
    ) {
        let drops = self.drops
        Task {
            for await report in drops {
                for queue in QueueEvent.Queue.allCases {
                    let ids = report.records.filter { $0.queue == queue }.map { JSONValue.string($0.messageId) }
                    guard !ids.isEmpty, let idsText = try? JSONValue.array(ids).jsonText() else { continue }
                    do {
                        try remove(queue, idsText, report.reason.rawValue)
                    } catch {
                        logger.debug("an outbox drop report arrived after its engine closed", metadata: ["error": "\(error)"])
                    }
                }
            }
        }
    }
}
