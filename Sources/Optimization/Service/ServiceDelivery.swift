import JavaScriptHost
import Logging

/// The one delivery path of an ``OptimizationService``: a dedicated engine whose shared core
/// runs ONE process-wide Insights queue for the events of every request, batched per profile,
/// with the delivery rules of the single-visitor client (flush at 25 queued events, every
/// `flushIntervalMs`, and on ``flush(force:)``; backoff with jitter, circuit breaker,
/// Retry-After, 401/403/404 disable; docs/delivery.md). One flush is in flight at a time, so
/// HTTP concurrency stays bounded however many visitors there are.
///
/// **Threading.** ``enqueue(_:)`` is synchronous and returns once the events are in the queue
/// (it takes the delivery engine's lock for one call); ``flush(force:)`` may be called from any
/// task.
final class ServiceDelivery: Sendable {
    let runtime: OptimizationRuntime

    init(runtime: OptimizationRuntime) throws(OptimizationError) {
        self.runtime = runtime
        do {
            try runtime.engine.call("__service.startDelivery")
        } catch {
            throw .bridgeError("cannot start the service delivery queue: \(error)")
        }
    }

    /// Puts events into the queue, each with the profile it belongs to (`{id, …}`).
    /// - Returns: the number of events queued now.
    /// - Throws: ``OptimizationError/bridgeError(_:)`` if the engine refuses them (closed).
    @discardableResult
    func enqueue(_ itemsJSON: String) throws(OptimizationError) -> Int {
        do {
            return Int(try runtime.engine.call("__service.enqueueInsights", .json(itemsJSON)).numberValue ?? 0)
        } catch JavaScriptError.engineClosed {
            throw .notInitialized
        } catch {
            throw .bridgeError("\(error)")
        }
    }

    /// Sends what is queued (a forced flush ignores backoff and an open circuit) and returns when
    /// that request finished; failures are reported on the queue events, not thrown.
    func flush(force: Bool) async {
        _ = try? await runtime.channel.request("__service.flushInsights", arguments: [.bool(force)], on: runtime.engine)
    }

    /// Events waiting in the queue.
    var queuedCount: Int {
        (try? runtime.engine.call("__service.insightsSize").numberValue).map { Int($0) } ?? 0
    }

    func close() {
        _ = try? runtime.engine.call("__service.closeDelivery")
        runtime.close()
    }
}
