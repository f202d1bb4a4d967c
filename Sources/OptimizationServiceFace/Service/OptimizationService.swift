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
import EventOutbox
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
    /// Host-side dependencies of a service.
    public struct Environment: Sendable {
        /// Receives the service's diagnostics and the shared core's log output. Visitor data is
        /// only ever logged at `debug`.
        public var logger: Logger
        /// Drives every timer: Experience budgets, Insights flush intervals, backoff, circuits.
        public var clock: any HostClock
        /// Carries every HTTP request. Nil (the default): ``start(timeout:)`` creates one
        /// `HTTPFetchTransport` limited to the configured base URLs, shared by all engines
        /// (one bounded connection pool), and ``shutdown()`` shuts it down.
        public var transport: (any FetchTransport)?
        /// Longest time one call into JavaScript may run.
        public var executionTimeLimit: Duration?
        /// Receives the service's metrics (“Observability” (Optimization’s documentation) lists them). Nil: the process-wide
        /// `MetricsSystem.factory` (no-op unless the application bootstraps a backend).
        public var metricsFactory: (any MetricsFactory)?
        /// Traces every request call (`OptimizationTelemetry/requestSpanName`), Experience and
        /// Insights request, and records flag evaluations on the current span (the article
        /// “Observability” lists the names). Nil: `InstrumentationSystem.tracer` (no-op unless
        /// the application bootstraps one).
        public var tracer: (any Tracer)?
        /// For tests: the scripts the engines load instead of the embedded JSRuntime.
        var scripts: [EmbeddedScript]?

        /// Creates an environment.
        /// - Parameters:
        ///   - logger: receives diagnostics and the core's log output; default a no-op logger.
        ///   - clock: drives every timer; default `SystemClock` (wall-clock time).
        ///   - transport: carries every HTTP request; nil (the default) lets ``OptimizationService/start(timeout:)``
        ///     create one shared `HTTPFetchTransport` limited to the configured base URLs.
        ///   - executionTimeLimit: longest time one call into JavaScript may run;
        ///     default 10, nil for no limit.
        ///   - metricsFactory: receives the service's metrics; nil (the default) uses
        ///     `MetricsSystem.factory`.
        ///   - tracer: traces Experience and Insights requests; nil (the default) uses
        ///     `InstrumentationSystem.tracer`.
        public init(
            logger: Logger = Logger(label: "Optimization", factory: { _ in SwiftLogNoOpLogHandler() }),
            clock: any HostClock = SystemClock(),
            transport: (any FetchTransport)? = nil,
            executionTimeLimit: Duration? = .seconds(10),
            metricsFactory: (any MetricsFactory)? = nil,
            tracer: (any Tracer)? = nil
        ) {
            self.logger = logger
            self.clock = clock
            self.transport = transport
            self.executionTimeLimit = executionTimeLimit
            self.metricsFactory = metricsFactory
            self.tracer = tracer
        }
    }

    /// Service-only settings.
    public struct Options: Sendable {
        /// Engines in the pool; nil means one per active processor core.
        public var engines: Int?
        /// Default latency budget of a request's Experience call (per request:
        /// ``RequestOptions/experienceTimeout``), at least 1 ms. Default 1.5 s. A call whose
        /// budget runs out has its HTTP request cancelled and its connection closed.
        public var experienceTimeout: Duration
        /// Capacity of the Insights queues together (oldest dropped beyond it), split evenly over
        /// the queues (``deliveryShards``). Default 10 000.
        public var insightsMaxEvents: Int
        /// Delivery shards: Swift Insights queues (no engine on the delivery path) that take the
        /// events of different profiles in parallel (every event of a profile goes to the same shard, so a
        /// profile's events stay in order and are batched together). Each flushes on its own
        /// (at 25 queued events, on the interval, on ``OptimizationService/flush()``), so at
        /// most this many Insights requests are in flight. Nil: one per pool engine. With an
        /// ``outboxDirectory`` there is always one.
        public var deliveryShards: Int?
        /// How long ``OptimizationService/shutdown()`` (and graceful shutdown of ``run()``) may
        /// spend flushing what is queued, in the time of ``Environment/clock`` (a timer on it,
        /// like every interval of the service). Default 10 s.
        public var shutdownFlushTimeout: Duration
        /// Where the durable outbox keeps accepted Insights events until they are delivered
        /// (the EventOutbox article “The durable outbox”); nil keeps them in memory only (lost if the process dies). One
        /// process per directory.
        public var outboxDirectory: URL?
        /// Durability policy, bounds and time to live of the outbox.
        public var outbox: OutboxConfiguration
        /// An outbox shared by every replica of the service (`SharedOutbox`): accepted Insights
        /// events are stored there, outside the process, and any replica delivers them. Nil (the
        /// default) for none. Not together with ``outboxDirectory``.
        public var sharedOutbox: SharedOutbox?

        /// Creates service options.
        /// - Parameters:
        ///   - engines: engines in the pool; nil (the default) means one per active processor core.
        ///   - experienceTimeout: default latency budget of a request's Experience call; default
        ///     1.5 s.
        ///   - insightsMaxEvents: capacity of the Insights queues together; default 10 000.
        ///   - deliveryShards: Insights queues taking events in parallel; nil (the default) means
        ///     one per pool engine (always one with an outbox).
        ///   - shutdownFlushTimeout: how long shutdown may spend flushing; default 10 seconds.
        ///   - outboxDirectory: directory of the durable outbox; nil (the default) keeps queued
        ///     events in memory only.
        ///   - outbox: durability policy, bounds and time to live of the outbox; default
        ///     `OutboxConfiguration()`.
        ///   - sharedOutbox: an outbox shared by the service's replicas; nil (the default) for none.
        public init(
            engines: Int? = nil, experienceTimeout: Duration = .milliseconds(1500), insightsMaxEvents: Int = 10_000,
            deliveryShards: Int? = nil, shutdownFlushTimeout: Duration = .seconds(10), outboxDirectory: URL? = nil,
            outbox: OutboxConfiguration = OutboxConfiguration(), sharedOutbox: SharedOutbox? = nil
        ) {
            self.engines = engines
            self.experienceTimeout = experienceTimeout
            self.insightsMaxEvents = insightsMaxEvents
            self.deliveryShards = deliveryShards
            self.shutdownFlushTimeout = shutdownFlushTimeout
            self.outboxDirectory = outboxDirectory
            self.outbox = outbox
            self.sharedOutbox = sharedOutbox
        }
    }

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

    private enum Phase: Sendable {
        case idle
        case starting
        case running(Running)
        /// Flushing before the engines close: resolution still works, events are refused.
        case stopping(Running)
        case stopped
    }

    private let phase = Mutex(Phase.idle)
    /// Tasks waiting for the service to run (``waitUntilRunning()``).
    let readiness = ServiceReadiness()
    /// The pool resolution uses, published without a lock while running or stopping (nil
    /// otherwise): every resolve on every thread reads it, and a lock or a retain here would make
    /// those threads write one shared cache line per call. ``poolKeptAlive`` owns the pool, so a
    /// reader that loaded it just before it was unpublished still holds a live object.
    private let resolutionPool = Atomic<Unmanaged<EnginePool>?>(nil)
    private let poolKeptAlive = Mutex<EnginePool?>(nil)
    package let blockedEventBroadcaster = EventBroadcaster<BlockedEvent>()
    package let queueEventBroadcaster = EventBroadcaster<QueueEvent>()
    /// The request methods whose event goes to the Experience API, as the shared core states
    /// them (`__service.configure`); a sticky `trackView` goes there too.
    let experienceMethods = Mutex<Set<String>>([])
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

    // MARK: Lifecycle

    /// Builds the engine pool and the delivery path: each engine is a new JavaScriptCore
    /// context group with JSRuntime loaded (~10 ms each; they are built in parallel).
    /// - Parameter timeout: the longest start-up may take, on the environment's clock (wall-clock
    ///   time by default); engines built after it are released.
    /// - Throws: `OptimizationError/configError(_:)` for an invalid configuration (for example
    ///   `defaults`, which hold visitor state), `OptimizationError/resourceLoadError(_:)` when
    ///   JSRuntime cannot load (naming the script), `OptimizationError/startTimedOut(_:)` when
    ///   the deadline passes, and `OptimizationError/alreadyStarted` when called twice.
    public func start(timeout: Duration = .seconds(30)) async throws(OptimizationError) {
        guard config.defaults == nil else {
            throw .configError("a service keeps no visitor state: pass consent, profile and selections per request (RequestOptions), not OptimizationConfig.defaults")
        }
        guard !config.clientId.isEmpty else { throw .configError("spaceId (or clientId) must not be empty") }
        guard options.outboxDirectory == nil || options.sharedOutbox == nil else {
            throw .configError("choose one outbox: outboxDirectory (this replica's disk) or sharedOutbox (shared by the replicas), not both")
        }
        config.warnWhenEnvironmentIsUnset(environment.logger)
        let claimed = phase.withLock { phase -> Bool in
            guard case .idle = phase else { return false }
            phase = .starting
            return true
        }
        guard claimed else { throw .alreadyStarted }
        do {
            let running = try await build(timeout: timeout)
            poolKeptAlive.withLock { $0 = running.pool }
            phase.withLock { $0 = .running(running) }
            resolutionPool.store(Unmanaged.passUnretained(running.pool), ordering: .releasing)
            environment.logger.info("optimization service started", metadata: ["engines": "\(running.pool.engines.count)"])
            readiness.settle(running: true)
        } catch {
            phase.withLock { $0 = .idle }
            throw error
        }
    }

    private func build(timeout: Duration) async throws(OptimizationError) -> Running {
        let outbox = try openOutbox()
        let (transport, ownedTransport) = try makeTransport()
        // The pool's engines, built in parallel on GCD threads: loading JSRuntime is blocking CPU
        // work that must not occupy Swift's cooperative pool. Delivery runs no engine.
        let startup = EngineStartup(count: engineCount, clock: environment.clock) { [self] () throws(OptimizationError) in
            try makeRuntime(transport: transport)
        }
        let runtimes: [OptimizationRuntime]
        do {
            runtimes = try await startup.run(timeout: timeout)
        } catch {
            outbox?.close()
            if let ownedTransport { try? await ownedTransport.shutdown() }
            throw error
        }
        let policy = DeliveryPolicy(config.queuePolicy, insightsMaxEvents: max(1, options.insightsMaxEvents))
        let relay = options.sharedOutbox.map {
            SharedOutboxRelay(
                configuration: $0, capacity: policy.insightsMaxEvents, clock: environment.clock, logger: environment.logger, metrics: metrics)
        }
        var removals: (@Sendable ([String], String) -> Void)?
        if let relay { removals = { ids, reason in relay.removed(ids, reason: reason) } }
        let queueEvents = QueueEventRelay(broadcaster: queueEventBroadcaster, policy: instrumentedQueuePolicy)
        let delivery = ServiceDelivery(
            queueCount: deliveryShardCount, url: config.insightsEventsURL, policy: policy, transport: transport, clock: environment.clock,
            outbox: outbox, removals: removals, onQueueEvent: { queueEvents.deliver($0) }, logger: environment.logger, metrics: metrics)
        relay?.start(delivery: delivery)
        return Running(
            pool: EnginePool(engines: runtimes, busyGauge: metrics.poolBusy), delivery: delivery, sharedOutbox: relay,
            ownedTransport: ownedTransport)
    }

    /// Opens the durable outbox when ``Options/outboxDirectory`` is set.
    private func openOutbox() throws(OptimizationError) -> DurableOutbox? {
        guard let directory = options.outboxDirectory else { return nil }
        do {
            return try DurableOutbox(directory: directory, configuration: options.outbox, clock: environment.clock, logger: environment.logger)
        } catch {
            throw .configError("the outbox at \(directory.path) cannot be used: \(error)")
        }
    }

    /// The number of Insights queues ``start(timeout:)`` creates (``Options/deliveryShards``):
    /// one per pool engine by default, one with an outbox (one store, one queue).
    public var deliveryShardCount: Int {
        options.outboxDirectory == nil ? max(1, options.deliveryShards ?? engineCount) : 1
    }

    /// A service engine: the service scripts and the core scripts they need (no visitor, no
    /// `__bridge`), started with `__service.configure`.
    func makeRuntime(transport: any FetchTransport) throws(OptimizationError) -> OptimizationRuntime {
        let runtime = try OptimizationRuntime(
            configuration: JavaScriptEngine.Configuration(
                clock: environment.clock,
                executionTimeLimit: environment.executionTimeLimit, logger: RequestLogging.scoped(environment.logger)),
            role: .service(configuration: serviceConfiguration),
            channel: BridgeChannel(queueEvents: QueueEventRelay(broadcaster: queueEventBroadcaster, policy: instrumentedQueuePolicy)),
            scripts: environment.scripts)
        let answer = runtime.startAnswer
        // Which calls ask the Experience circuit: the shared core says (every engine the same).
        guard let text = answer.stringValue, let configured = try? JSONValue(jsonText: text),
              let methods = configured["experienceMethods"]?.arrayValue
        else {
            runtime.close()
            throw .bridgeError("the shared core's configure answer names no Experience methods")
        }
        experienceMethods.withLock { $0 = Set(methods.compactMap(\.stringValue)) }
        return runtime
    }

    /// The transport every engine uses: the injected or an owned `HTTPFetchTransport`, wrapped
    /// for tracing and delivery metrics.
    func makeTransport() throws(OptimizationError) -> (any FetchTransport, HTTPFetchTransport?) {
        let (inner, owned) = try makeInnerTransport()
        let insightsBase = (config.api ?? OptimizationAPIConfig()).effectiveInsightsBaseURL
        let transport = InstrumentedFetchTransport(
            inner: inner, tracer: tracer, metrics: metrics, insightsBaseURL: insightsBase)
        return (transport, owned)
    }

    private func makeInnerTransport() throws(OptimizationError) -> (any FetchTransport, HTTPFetchTransport?) {
        if let injected = environment.transport { return (injected, nil) }
        let transport = try (config.api ?? OptimizationAPIConfig()).makeTransport(logger: environment.logger)
        return (transport, transport)
    }

    /// Stops the service: event calls made from now on throw `OptimizationError/shutDown`
    /// (resolution keeps working until the engines close); what is queued is flushed (one
    /// attempt, unless a backoff wait or an open circuit forbids it) within ``Options/shutdownFlushTimeout``; engines, timers and an owned
    /// transport are released. Experience calls still in flight when the engines close throw
    /// `OptimizationError/shutDown` and their HTTP requests are cancelled (even on an injected
    /// transport). Idempotent: a second call (also while the first is still
    /// flushing) returns at once.
    public func shutdown() async {
        let running = phase.withLock { phase -> Running? in
            switch phase {
            case .running(let running):
                phase = .stopping(running)
                return running
            case .idle, .starting:
                phase = .stopped
                return nil
            case .stopping, .stopped:
                return nil
            }
        }
        readiness.settle(running: false)
        guard let running else { return }
        let flushed = await withDeadline(options.shutdownFlushTimeout, on: environment.clock) { await running.flush() }
        if !flushed {
            environment.logger.warning(
                running.sharedOutbox == nil
                    ? "shutdown flush did not finish in time; undelivered events are dropped"
                    : "shutdown flush did not finish in time; undelivered events stay in the shared outbox for another replica",
                metadata: ["queued": "\(running.delivery.queuedCount)"])
        }
        await running.sharedOutbox?.close()
        phase.withLock { $0 = .stopped }
        resolutionPool.store(nil, ordering: .releasing)
        running.pool.close()
        running.delivery.close()
        running.delivery.closeOutbox()
        if let owned = running.ownedTransport { try? await owned.shutdown() }
        blockedEventBroadcaster.finishAll()
        queueEventBroadcaster.finishAll()
        environment.logger.info("optimization service stopped")
    }

    /// The engines, while they are open (also while stopping).
    var running: Running? {
        switch phase.withLock({ $0 }) {
        case .running(let running), .stopping(let running): return running
        default: return nil
        }
    }

    /// The runtimes of the engine pool while it is open; none before `start` and after
    /// shutdown (for the library's tests).
    package var poolRuntimes: [OptimizationRuntime] { running?.pool.engines ?? [] }

    /// The running state for an event call, or `OptimizationError/shutDown` /
    /// `OptimizationError/notInitialized`.
    func requireRunning() throws(OptimizationError) -> Running {
        switch phase.withLock({ $0 }) {
        case .running(let running): return running
        case .stopping, .stopped: throw .shutDown
        case .idle, .starting: throw .notInitialized
        }
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

    // MARK: Configuration handed to the engines

    /// The configured queue callbacks, plus the Insights circuit gauge.
    private var instrumentedQueuePolicy: QueuePolicy {
        var policy = config.queuePolicy ?? QueuePolicy()
        let metrics = self.metrics
        let opened = policy.onCircuitOpen
        let recovered = policy.onFlushRecovered
        policy.onCircuitOpen = { event in
            metrics.circuit("insights", isOpen: true)
            opened?(event)
        }
        policy.onFlushRecovered = { event in
            metrics.circuit("insights", isOpen: false)
            recovered?(event)
        }
        return policy
    }

    /// `__service.configure`: the tenant, the allow-list, the log level and the prepared-document
    /// capacity of every engine, and the default locale (checked there). The flush policy is
    /// Swift's alone (the Experience calls' overload retries and circuit, `ServiceDelivery`).
    private var serviceConfiguration: JSONValue {
        let api = config.api ?? OptimizationAPIConfig()
        var apiObject: OrderedDictionary<String, JSONValue> = [
            "experienceBaseUrl": .string(api.effectiveExperienceBaseURL),
            "insightsBaseUrl": .string(api.effectiveInsightsBaseURL),
        ]
        if let features = api.enabledFeatures { apiObject["enabledFeatures"] = .array(features.map(JSONValue.string)) }
        var object = config.tenantMembers
        object.merge([
            "allowedEventTypes": .array((config.allowedEventTypes ?? Self.defaultAllowedEventTypes).map(JSONValue.string)),
            "channel": .string(config.channel),
            "library": ["name": .string(OptimizationLibrary.name), "version": .string(OptimizationLibrary.version)],
            "api": .object(apiObject),
            "requestTimeoutMs": .number(JSONNumber(max(1, options.experienceTimeout.wholeMilliseconds))),
            "logLevel": .string(config.logLevel.rawValue),
            "entryCacheSize": .number(JSONNumber(max(1, config.entryCacheSize))),
        ]) { current, _ in current }
        if let locale = config.locale { object["locale"] = .string(locale) }
        return .object(object)
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
