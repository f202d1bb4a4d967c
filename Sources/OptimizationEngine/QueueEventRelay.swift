import OptimizationDelivery
import JavaScriptHost
import Logging
import OptimizationJSON

/// Where the delivery queues' reports go: each `QueueEvent` is yielded to the broadcaster
/// (`OptimizationClient/queueEvents`, `OptimizationService/queueEvents`) and handed to the
/// matching `QueuePolicy` callback.
///
/// **Threading.** ``deliver(_:)`` runs on the queue's thread; it yields (never blocks) and calls
/// the host's callback synchronously.
package final class QueueEventRelay: Sendable {
    package let broadcaster: EventBroadcaster<QueueEvent>
    private let policy: QueuePolicy?

    package init(broadcaster: EventBroadcaster<QueueEvent> = .init(), policy: QueuePolicy? = nil) {
        self.broadcaster = broadcaster
        self.policy = policy
    }

    /// Hands one report to the stream and to the matching callback.
    package func deliver(_ event: QueueEvent) {
        broadcaster.yield(event)
        policy?.callback(for: event.type)?(event)
    }
}
