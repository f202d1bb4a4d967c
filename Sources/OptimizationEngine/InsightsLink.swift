import JavaScriptHost
import Logging
import OptimizationDelivery
import OptimizationJSON

/// The Swift end of `bridge/insights-link.js` for one client engine: the client's built
/// Insights events go from the shared core straight into a Swift `InsightsQueue`, which
/// batches and sends them (JavaScript decides, Swift delivers).
///
/// Registers, before `__bridge.initialize`:
/// - `__nativeInsightsAccept(eventJSON)` → the queue's size: the event joins the batch of the
///   visitor's current profile, or is held until one exists. With a durable outbox it is stored
///   first; when that fails the native throws, so the event method rejects and publishes nothing.
/// - `__nativeInsightsProfile(profileJSON | null)`: the visitor's current profile.
/// - `__nativeInsightsPurge()`: consent withdrawn; every queued and held event is discarded.
///
/// **Threading.** The natives run inside engine calls, under the engine's lock; they only call
/// the (thread-safe) queue, never back into the engine.
package final class InsightsLink: Sendable {
    package let queue: InsightsQueue

    package init(queue: InsightsQueue) {
        self.queue = queue
    }

    package func install(on engine: JavaScriptEngine) throws {
        try engine.register(BridgeContract.Native.insightsAccept) { [queue] arguments throws(InsightsHandoffError) in
            guard let text = arguments.first?.stringValue else { throw .init(message: "an Insights event must be JSON text") }
            let parts: (messageId: String, consent: Bool)
            do {
                parts = try InsightsEvent.parts(ofEvent: text)
            } catch {
                throw .init(message: "the Insights event was refused: \(error)")
            }
            do {
                return .number(Double(try queue.enqueueForVisitor(messageId: parts.messageId, consent: parts.consent, eventJSON: text)))
            } catch {
                throw .init(message: "\(error)")
            }
        }
        try engine.register(BridgeContract.Native.insightsProfile) { [queue] arguments in
            guard let text = arguments.first?.stringValue, let tape = JSONTape.scan(text), tape.kind(of: JSONTape.rootNode) == .object else {
                queue.visitorProfileChanged(nil)
                return .undefined
            }
            let id = tape.member("id", of: JSONTape.rootNode).flatMap { tape.string(at: $0) } ?? ""
            queue.visitorProfileChanged((id, text))
            return .undefined
        }
        try engine.register(BridgeContract.Native.insightsPurge) { [queue] _ in
            queue.purge()
            return .undefined
        }
    }
}

/// Why `__nativeInsightsAccept` refused an event (its message becomes the JavaScript error's).
package struct InsightsHandoffError: Error, Sendable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}
