import OptimizationServiceDelivery
import OptimizationVocabulary
import OptimizationDelivery
import CoreMetrics
import Foundation
import JavaScriptHost
import Logging
import OrderedCollections
import Synchronization
import Tracing
import HostPlatform
import OptimizationJSON
import OptimizationContent
import OptimizationTransport
import OptimizationEngine

/// The engine for services that render for many visitors at once (HTTP services): created once
/// per process, it runs a pool of JavaScript engines and ONE delivery path, and keeps **no
/// visitor state**. Each incoming request gets a request-bound ``OptimizationRequest`` from
/// ``forRequest(_:)`` carrying that visitor's consent, profile and selections.
///
/// ```swift
/// let service = OptimizationService(config: OptimizationConfig(clientId: "my-client-id"),
///                                   environment: .init(logger: logger))
/// try await service.start()
/// // per request:
/// let request = service.forRequest(RequestOptions(consent: consentFromCookie, profileId: idFromCookie))
/// try await request.page(["url": .string(url)])
/// let hero = request.resolveOptimizedEntry(baseline: preparedHero)
/// ```
///
/// **Threading.** Every method is safe from any thread or task. `resolveOptimizedEntry(baseline:selectedOptimizations:)`
/// is synchronous, borrows a free engine (waiting only when every engine is busy) and never
/// throws. A `ContentfulEntry` or `SelectedOptimizations` shared by all threads is
/// transferred to each engine at most once per revision.
///
/// **Lifecycle.** ``start(timeout:)`` builds the engines (bounded); ``shutdown()`` stops
/// accepting events, flushes what is queued and releases engines and connections.
public final class OptimizationService: Sendable {

    /// The event types a service lets through before a visitor consents when
    /// `OptimizationConfig/allowedEventTypes` is nil: a page-based server identifies visitors
    /// and counts page renders. The single-visitor client's default differs by design
    /// (`OptimizationClient/defaultAllowedEventTypes`).
    public static let defaultAllowedEventTypes = ["identify", "page"]

    /// The configuration the service was created with. Its `OptimizationConfig/defaults` must
    /// be nil (``start(timeout:)`` throws otherwise: a service keeps no visitor state).
    public let config: OptimizationConfig
    /// The service-only settings the service was created with.
    public let options: Options
    /// The host-side dependencies the service was created with.
    public let environment: Environment

    struct Running: Sendable {
        let pool: EnginePool
        let delivery: ServiceDelivery
        /// With ``Options/sharedOutbox``: where event calls store their Insights events.
        let sharedOutbox: SharedOutboxRelay?
        let ownedTransport: HTTPFetchTransport?
    }

    enum Phase: Sendable {
        case idle
        case starting
        case running(Running)
        /// Flushing before the engines close: resolution still works, events are refused.
        case stopping(Running)
        case stopped
    }

    let phase = Mutex(Phase.idle)
    /// Tasks waiting for the service to run (``waitUntilRunning()``).
    let readiness = ServiceReadiness()
    /// The pool resolution uses, published without a lock while running or stopping (nil
    /// otherwise): every resolve on every thread reads it, and a lock or a retain here would make
    /// those threads write one shared cache line per call. ``poolKeptAlive`` owns the pool, so a
    /// reader that loaded it just before it was unpublished still holds a live object.
    let resolutionPool = Atomic<Unmanaged<EnginePool>?>(nil)
    let poolKeptAlive = Mutex<EnginePool?>(nil)
    package let blockedEventBroadcaster = EventBroadcaster<BlockedEvent>()
    package let queueEventBroadcaster = EventBroadcaster<QueueEvent>()
    /// Which calls go to the Experience API, as the shared core states it (`__service.configure`).
    let experienceRouting = Mutex<ExperienceRouting>(.none)
    /// Experience calls run one at a time per profile id.
    let profileCalls: ProfileCallSerializer
    let metrics: ServiceMetrics
    /// The environment's tracer, or `InstrumentationSystem.tracer`.
    package let tracer: any Tracer
    /// False for the no-op tracer: requests then start no span and build no attribute.
    let tracesRequests: Bool

    /// Creates a service; nothing runs until ``start(timeout:)`` (or ``run()``).
    public init(config: OptimizationConfig, options: Options = Options(), environment: Environment = Environment()) {
        self.config = config
        self.options = options
        self.environment = environment
        let tracer = environment.tracer ?? InstrumentationSystem.tracer
        self.tracer = tracer
        tracesRequests = !(tracer is NoOpTracer)
        metrics = ServiceMetrics(factory: environment.metricsFactory ?? MetricsSystem.factory, tracer: tracer)
        profileCalls = ProfileCallSerializer(clock: environment.clock)
    }

    deinit {
        switch phase.withLock({ $0 }) {
        case .running(let running), .stopping(let running):
            running.sharedOutbox?.abandon()
            running.pool.close()
            running.delivery.close()
        default:
            break
        }
    }

    /// The number of engines ``start(timeout:)`` creates.
    public var engineCount: Int {
        max(1, options.engines ?? ProcessInfo.processInfo.activeProcessorCount)
    }

    /// True between a successful ``start(timeout:)`` and ``shutdown()``.
    public var isRunning: Bool {
        if case .running = phase.withLock({ $0 }) { return true }
        return false
    }

    /// Suspends until the service runs: returns true once ``start(timeout:)`` succeeded (at once
    /// when it already did), false once ``shutdown()`` was called or the waiting task is
    /// cancelled. A failed start leaves waiters waiting for a later start. For code that serves
    /// requests beside the task that starts the service (a readiness probe, a route that needs
    /// the engines). Any task; never throws.
    public func waitUntilRunning() async -> Bool {
        await readiness.wait()
    }

    // MARK: Resolution

    /// The entry to render for a visitor with these selections. Synchronous, thread-safe, never
    /// throws: before ``start(timeout:)``, after ``shutdown()`` and on any internal failure
    /// (logged) it returns the baseline.
    /// - Parameters:
    ///   - baseline: the prepared entry (reuse it across calls: it is transferred to each engine
    ///     at most once per revision).
    ///   - selectedOptimizations: nil or `SelectedOptimizations/empty` ⇒ nothing selected (a
    ///     service has no "current" visitor).
    public func resolveOptimizedEntry(
        baseline: ContentfulEntry, selectedOptimizations: SelectedOptimizations?
    ) -> ResolvedOptimizedEntry {
        guard let pool = resolutionPool.load(ordering: .acquiring) else { return ResolvedOptimizedEntry(entry: baseline.renderedBaseline) }
        // Timed only for a real metrics backend (two clock reads are a fifth of a memoized resolve).
        let started = metrics.isRecording ? DispatchTime.now().uptimeNanoseconds : 0
        let (answer, waited) = pool._withUnsafeGuaranteedRef { pool in
            pool.withEngine { $0.resolveReportingOutcome(baseline, selections: selectedOptimizations) }
        }
        guard metrics.isRecording else { return answer.resolved }
        let elapsed = DispatchTime.now().uptimeNanoseconds - started
        if waited { metrics.poolWait.recordNanoseconds(Int64(clamping: elapsed)) }
        metrics.resolved(answer.outcome, nanoseconds: elapsed)
        if let selection = answer.resolved.selectedOptimization { metrics.variantResolved(selection: selection) }
        return answer.resolved
    }

    // MARK: Requests

    /// A request-bound object for one incoming request. Cheap (no engine call); use it for that
    /// request only and drop it afterwards.
    public func forRequest(_ options: RequestOptions = RequestOptions()) -> OptimizationRequest {
        OptimizationRequest(service: self, options: options)
    }

    /// Every call that consent blocked, from every request, reported exactly once each with the
    /// method and its payload (`args`). A new stream per access, no replay; finishes on
    /// ``shutdown()``. Never logged above `debug` with its payload.
    public var blockedEvents: AsyncStream<BlockedEvent> {
        blockedEventBroadcaster.makeStream()
    }

    /// Reports of the Insights queues (flush failures, circuit changes, drops).
    public var queueEvents: AsyncStream<QueueEvent> {
        queueEventBroadcaster.makeStream()
    }

    /// Sends every queued Insights event now and returns when those requests finished: awaits a
    /// request in flight, then sends what was accepted meanwhile. While a backoff wait runs or a
    /// circuit is open nothing is sent (the scheduled retry sends when it ends). Failures are
    /// reported on ``queueEvents``, not thrown; the events stay queued for a retry.
    ///
    /// With a ``Options/sharedOutbox`` it first claims the stored events that fit into the queues
    /// (this replica's and others' unclaimed ones), and afterwards deletes what was delivered from
    /// the store.
    public func flush() async {
        await running?.flush()
    }

    /// Insights events accepted and not yet delivered that the queue holds in memory (with an
    /// outbox directory, its window of the stored backlog; more may wait on disk).
    public var queuedEventCount: Int {
        running?.delivery.queuedCount ?? 0
    }

    /// Whether the Experience circuit is open (calls fail fast).
    public var isExperienceCircuitOpen: Bool {
        running?.delivery.isExperienceCircuitOpen ?? false
    }

    /// Erases one visitor's queued Insights events, from memory and from the outbox on disk
    /// (delivered or not), before it returns (for example on a data-erasure request).
    ///
    /// With a ``Options/sharedOutbox`` use the `async` overload, which also erases them from the
    /// shared store before it returns; this one erases them from memory and starts the shared
    /// store's erasure, logging an error if it fails.
    /// - Returns: how many undelivered events were erased.
    @discardableResult
    public func eraseProfile(_ profileId: String) throws(OptimizationError) -> Int {
        guard let running else { return 0 }
        if let relay = running.sharedOutbox {
            let logger = environment.logger
            Task {
                do {
                    _ = try await relay.eraseProfile(profileId)
                } catch {
                    logger.error("a profile's events could not be erased from the shared outbox", metadata: ["error": "\(error)"])
                }
            }
            return running.delivery.eraseQueuedEvents(of: profileId)
        }
        return try running.delivery.eraseProfile(profileId)
    }

    /// Erases one visitor's queued Insights events, from memory, from the outbox on disk and from
    /// the ``Options/sharedOutbox``'s store (delivered or not), before it returns.
    /// - Returns: how many undelivered events were erased (with a shared outbox: from the store).
    /// - Throws: `OptimizationError/bridgeError(_:)` when an outbox could not erase them.
    @discardableResult
    public func eraseProfile(_ profileId: String) async throws(OptimizationError) -> Int {
        guard let running else { return 0 }
        guard let relay = running.sharedOutbox else { return try running.delivery.eraseProfile(profileId) }
        return try await relay.eraseProfile(profileId)
    }
}

extension OptimizationService.Running {
    /// Sends what is queued and returns when those requests finished; with a shared
    /// outbox, first claims what fits and afterwards deletes what was delivered from the store.
    func flush() async {
        await sharedOutbox?.pull(claim: true)
        await delivery.flush()
        await sharedOutbox?.pull(claim: false)
    }
}
