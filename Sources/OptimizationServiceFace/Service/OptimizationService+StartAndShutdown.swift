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

extension OptimizationService {
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
        // Which calls go to the Experience API: the shared core says (every engine the same).
        guard let text = answer.stringValue, let configured = try? JSONValue(jsonText: text),
              let routing = ExperienceRouting(configureAnswer: configured)
        else {
            runtime.close()
            throw .bridgeError("the shared core's configure answer does not say which calls go to the Experience API")
        }
        experienceRouting.withLock { $0 = routing }
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
}
