import OptimizationVocabulary
import OptimizationDelivery
import Logging
import HostPlatform
import OptimizationTransport
import OptimizationEngine

// Delivery to the Experience and Insights APIs.
//
// Experience events (identify, page, screen, track, sticky views) are sent at once while online,
// one request at a time and in order; Insights events (views, clicks, hovers, flag views) are
// batched per profile and sent at 25 queued events, every `QueueFlushPolicy.flushInterval` (30 s) while events
// are queued, on ``OptimizationClient/flush()`` and when going online. Failures (408, 429, 5xx,
// transport errors, timeouts) keep the events queued and retry with capped exponential backoff and
// jitter (a `Retry-After` on 429/503 is the minimum wait); after `maxConsecutiveFailures` the
// circuit opens and nothing is sent for `circuitOpenDuration`. Every timer runs on the client's clock.
// Both queues are Swift (`ExperienceQueue`, `InsightsQueue`), fed by the engine's event methods,
// which gate and build each event; the engine builds each Experience upsert and reads its answer.
// See <doc:DeliveryGuarantees> for the guarantees.
extension OptimizationClient {
    /// Every delivery queue report: offline drops, flush failures, circuit open and recovery,
    /// dropped batches and disabled delivery (see `QueueEventType`), in the order they happen.
    ///
    /// Each access returns a NEW stream that receives only reports made after it was created (no
    /// replay). It keeps receiving across a re-`initialize` and finishes on ``destroy()``. The
    /// same reports also reach the `QueuePolicy` callbacks, synchronously.
    public var queueEvents: AsyncStream<QueueEvent> {
        queueEventBroadcaster.makeStream()
    }

    /// Sends what is queued: an Insights flush, then an Experience flush
    /// (neither runs during a backoff wait or while a circuit is open; a flush already running is
    /// awaited instead). Returns once both finished, successfully or not: failures are reported on
    /// ``queueEvents`` and retried on their own, never thrown.
    /// - Throws: `OptimizationError/notInitialized` before `initialize` or after ``destroy()``.
    public func flush() async throws(OptimizationError) {
        guard let runtime = currentRuntime else { throw .notInitialized }
        await runtime.insights?.queue.flush()
        await runtime.experience?.queue.flush()
    }

    /// The transport for an engine: the injected one, or a new `HTTPFetchTransport`
    /// allow-listing exactly the configured (or default) Experience and Insights base URLs.
    func makeTransport(for config: OptimizationConfig) throws(OptimizationError) -> (any FetchTransport, HTTPFetchTransport?) {
        if let injected = environment.transport { return (injected, nil) }
        let transport = try (config.api ?? OptimizationAPIConfig()).makeTransport(logger: environment.logger)
        return (transport, transport)
    }
}
