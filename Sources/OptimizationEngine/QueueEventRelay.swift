import OptimizationDelivery
import JavaScriptHost
import Logging
import OptimizationJSON

/// The Swift end of `__nativeOnQueueEvent` for one engine: parses each report into a
/// `QueueEvent`, yields it to the client's broadcaster (`OptimizationClient/queueEvents`) and
/// calls the matching `QueuePolicy` callback.
///
/// **Threading.** The native function runs inside the engine (its lock held); it only parses,
/// yields (never blocks) and calls the host's callback synchronously.
package final class QueueEventRelay: Sendable {
    package let broadcaster: EventBroadcaster<QueueEvent>
    private let policy: QueuePolicy?

    package init(broadcaster: EventBroadcaster<QueueEvent> = .init(), policy: QueuePolicy? = nil) {
        self.broadcaster = broadcaster
        self.policy = policy
    }

    /// Registers `__nativeOnQueueEvent` on `engine`. Call before `__bridge.initialize`.
    package func install(on engine: JavaScriptEngine) throws {
        let logger = engine.configuration.logger
        try engine.register(BridgeContract.Native.onQueueEvent) { [self] arguments in
            guard let text = arguments.first?.stringValue, let value = try? JSONValue(jsonText: text),
                  let event = QueueEvent(bridgeValue: value)
            else {
                logger.error("the engine pushed a queue event that is not valid")
                return .undefined
            }
            deliver(event)
            return .undefined
        }
    }

    package func deliver(_ event: QueueEvent) {
        broadcaster.yield(event)
        policy?.callback(for: event.type)?(event)
    }
}
