import OptimizationVocabulary
import OptimizationDelivery
import Foundation
import JavaScriptHost
import Logging
import Synchronization
import HostPlatform
import OptimizationJSON
import OptimizationContent
import OptimizationEngine
import CoreMetrics
import Tracing

/// The engine's public façade: resolves Contentful entries to their baseline or variant for a
/// visitor, on top of the shared JavaScript core running in JavaScriptCore.
///
/// **Threading.** Every method is safe from any thread. `resolveOptimizedEntry(baseline:selectedOptimizations:)`
/// is synchronous and takes the engine's lock for one call (no actor hop); one client runs one
/// JavaScript VM, so concurrent callers on one client are serialized. Use one client per thread
/// of work for parallelism.
///
/// **Lifecycle.** Created uninitialized; ``initialize(config:)`` loads the engine;
/// ``destroy()`` releases it (the client can be initialized again).
public final class OptimizationClient: Sendable {
    /// Host-side dependencies of a client.
    public struct Environment: Sendable {
        /// Receives the client's diagnostics and the shared core's log output. Visitor data is
        /// only ever logged at `debug`.
        public var logger: Logger
        /// Drives every timer of the engine (flush intervals, backoff, dwell). Inject a
        /// `ManualClock` in tests.
        public var clock: any HostClock
        /// Carries the core's HTTP requests to the Experience and Insights APIs. Nil (the
        /// default): `initialize` creates an `HTTPFetchTransport` that may reach exactly the
        /// configured (or default) Experience and Insights base URLs, and ``destroy()`` shuts it
        /// down. An injected transport is used as is (and never shut down by the client).
        public var transport: (any FetchTransport)?
        /// Longest time one call into JavaScript may run.
        public var executionTimeLimit: Duration?
        /// Where consent and profile continuity survive restarts. Default ``OptimizationStorage/automatic``.
        /// With a directory (``OptimizationStorage/automatic`` or ``OptimizationStorage/directory(_:)``)
        /// accepted events are also kept in a durable outbox, `<directory>/outbox`, until they are
        /// delivered, so a crash or restart loses none (the OptimizationDelivery article “The durable outbox”); one client per directory.
        public var storage: OptimizationStorage
        /// Durability policy, bounds and time to live of the outbox (used with a storage directory).
        public var outbox: OutboxConfiguration
        /// The outbox's file access (tests inject faults such as a full disk); nil: the real one.
        package var outboxFileSystem: (any OutboxFileSystem)?
        /// Receives a `feature_flag.evaluation` event on the task's current span for every
        /// ``OptimizationClient/getFlag(_:)`` (the article “Observability” (Optimization's
        /// documentation) lists the attributes). Nil: `InstrumentationSystem.tracer` (no-op unless
        /// the application bootstraps one).
        public var tracer: (any Tracer)?
        /// Receives the client's metrics (`optimization_flag_evaluations_total`,
        /// `optimization_variant_resolutions_total`). Nil: the
        /// process-wide `MetricsSystem.factory` (no-op unless the application bootstraps a backend).
        public var metricsFactory: (any MetricsFactory)?

        /// Creates an environment.
        /// - Parameters:
        ///   - logger: receives diagnostics and the core's log output; default a no-op logger.
        ///   - clock: drives every timer of the engine; default `SystemClock` (wall-clock time).
        ///   - transport: carries the core's HTTP requests; nil (the default) lets `initialize`
        ///     create an `HTTPFetchTransport` limited to the configured base URLs.
        ///   - executionTimeLimit: longest time one call into JavaScript may run;
        ///     default 10, nil for no limit.
        ///   - storage: where consent and profile continuity (and, with a directory, the durable
        ///     outbox) are kept; default ``OptimizationStorage/automatic``.
        ///   - outbox: durability policy, bounds and time to live of the outbox; default
        ///     `OutboxConfiguration()`.
        ///
        /// ``tracer`` and ``metricsFactory`` start nil; set them on the environment.
        public init(
            logger: Logger = Logger(label: "Optimization", factory: { _ in SwiftLogNoOpLogHandler() }),
            clock: any HostClock = SystemClock(),
            transport: (any FetchTransport)? = nil,
            executionTimeLimit: Duration? = .seconds(10),
            storage: OptimizationStorage = .automatic,
            outbox: OutboxConfiguration = OutboxConfiguration()
        ) {
            self.storage = storage
            self.outbox = outbox
            self.logger = logger
            self.clock = clock
            self.transport = transport
            self.executionTimeLimit = executionTimeLimit
        }
    }

    /// The host-side dependencies the client was created with; fixed for its lifetime.
    public let environment: Environment
    private let runtime = Mutex<OptimizationRuntime?>(nil)
    /// Feed ``events`` / ``blockedEvents``; they outlive one engine (a re-initialize keeps them).
    package let eventBroadcaster = EventBroadcaster<JSONValue>()
    package let blockedEventBroadcaster = EventBroadcaster<BlockedEvent>()
    let stateBroadcaster = EventBroadcaster<OptimizationState>()
    package let queueEventBroadcaster = EventBroadcaster<QueueEvent>()
    /// The host's last ``setOnline(_:)``; a new engine starts in it.
    let isOnline = Mutex(true)
    /// Where ``getFlag(_:)`` reports its evaluations (the environment's tracer and metrics).
    let flagEvaluations: FeatureFlagTelemetry
    /// Counts resolutions by experience and variant index (the environment's metrics).
    let variantResolutions: VariantResolutionCounter

    /// The event types a client lets through before the visitor consents when
    /// `OptimizationConfig/allowedEventTypes` is nil: a screen-based host (a kiosk, a sign)
    /// identifies itself and reports the screen it shows. A service's default differs by design
    /// (`OptimizationService/defaultAllowedEventTypes`).
    public static let defaultAllowedEventTypes = ["identify", "screen"]

    /// Creates an uninitialized client; nothing runs until ``initialize(config:)``.
    /// - Parameter environment: host-side dependencies; the default has a no-op logger, the
    ///   system clock, a transport created at `initialize` and ``OptimizationStorage/automatic``.
    public init(environment: Environment = Environment()) {
        self.environment = environment
        let metricsFactory = environment.metricsFactory ?? MetricsSystem.factory
        flagEvaluations = FeatureFlagTelemetry(tracer: environment.tracer ?? InstrumentationSystem.tracer, metricsFactory: metricsFactory)
        variantResolutions = VariantResolutionCounter(factory: metricsFactory)
    }

    deinit {
        destroy()
    }

    /// True between a successful ``initialize(config:)`` and ``destroy()``.
    public var isInitialized: Bool {
        runtime.withLock { $0 != nil }
    }

    /// Starts the engine with `config`. Calling it again replaces the running engine (the old
    /// one is destroyed first).
    /// With a storage directory the outbox is opened first, and the undelivered events it holds
    /// are queued again (ahead of new ones) and flushed as usual.
    /// - Throws: `OptimizationError/configError(_:)` for an invalid configuration (for example
    ///   an invalid locale) or an outbox directory that cannot be used (another process owns
    ///   it), `OptimizationError/resourceLoadError(_:)` if the embedded JavaScript cannot be
    ///   loaded.
    public func initialize(config: OptimizationConfig) throws(OptimizationError) {
        guard !config.clientId.isEmpty else { throw .configError("spaceId (or clientId) must not be empty") }
        config.warnWhenEnvironmentIsUnset(environment.logger)
        releaseRuntime()
        let (transport, ownedTransport) = try makeTransport(for: config)
        let engineConfiguration = JavaScriptEngine.Configuration(
            clock: environment.clock, executionTimeLimit: environment.executionTimeLimit, logger: environment.logger)
        let started = runtimeStart()
        let directory = storageDirectory(for: config)
        let persistence = makePersistence(directory: directory)
        let outbox: OutboxLink?
        do {
            outbox = try directory.map { directory throws(OptimizationError) in
                try OutboxLink.open(
                    directory: directory.appendingPathComponent("outbox", isDirectory: true),
                    configuration: environment.outbox, clock: environment.clock, logger: environment.logger,
                    fileSystem: environment.outboxFileSystem ?? PosixOutboxFileSystem())
            }
        } catch {
            if let ownedTransport { Task { try? await ownedTransport.shutdown() } }
            throw error
        }
        var bridgeConfiguration = config.bridgeConfiguration
        if case .object(var members) = bridgeConfiguration, let persistence {
            members["persisted"] = persistence.persistedConfiguration
            bridgeConfiguration = .object(members)
        }
        let states = stateBroadcaster
        let queueEvents = QueueEventRelay(broadcaster: queueEventBroadcaster, policy: config.queuePolicy)
        let insights = InsightsQueue(
            url: config.insightsEventsURL, policy: DeliveryPolicy(config.queuePolicy), transport: transport, clock: environment.clock,
            outbox: outbox?.outbox, logger: environment.logger, onQueueEvent: { queueEvents.deliver($0) })
        insights.setOnline(isOnline.withLock { $0 })
        let experience = ExperienceQueue(
            policy: DeliveryPolicy(config.queuePolicy), transport: transport, clock: environment.clock, outbox: outbox?.outbox,
            logger: environment.logger, onQueueEvent: { queueEvents.deliver($0) })
        experience.setOnline(isOnline.withLock { $0 })
        let newRuntime: OptimizationRuntime
        do {
            newRuntime = try OptimizationRuntime(
                configuration: engineConfiguration, role: .client(configuration: bridgeConfiguration),
                channel: BridgeChannel(
                    events: eventBroadcaster, blockedEvents: blockedEventBroadcaster, queueEvents: queueEvents
                ) { state in
                    persistence?.stateChanged(state)
                    states.yield(state)
                },
                persistence: persistence, outbox: outbox, insights: InsightsLink(queue: insights),
                experience: ExperienceLink(queue: experience, logger: environment.logger), ownedTransport: ownedTransport)
        } catch {
            insights.close()
            experience.close()
            outbox?.close()
            if let ownedTransport { Task { try? await ownedTransport.shutdown() } }
            throw error
        }
        environment.logger.debug("optimization engine started", metadata: ["ms": "\(runtimeStart() - started)"])
        if !isOnline.withLock({ $0 }) {
            _ = try? newRuntime.engine.call(BridgeContract.Visitor.setOnline, .bool(false))
        }
        if let outbox { Self.resumeBacklog(of: outbox, insights: insights, experience: experience, logger: environment.logger) }
        runtime.withLock { $0 = newRuntime }
    }

    /// Releases the engine: fires a last best-effort flush of both delivery queues, also while
    /// offline but never during a backoff wait or an open circuit (not
    /// awaited: requests in flight finish in the background, bounded by the request timeout, and
    /// a transport the client created is shut down afterwards; `await flush()` first for a
    /// graceful shutdown), cancels every timer (a pending event call throws
    /// `OptimizationError/notInitialized`) and finishes every ``events`` / ``blockedEvents`` /
    /// ``queueEvents`` stream handed out so far. Safe to call at any time; the client can be initialized again
    /// afterwards.
    public func destroy() {
        releaseRuntime()
        eventBroadcaster.finishAll()
        blockedEventBroadcaster.finishAll()
        stateBroadcaster.finishAll()
        queueEventBroadcaster.finishAll()
    }

    /// Fills the queue windows (Insights and Experience) from the stored backlog (a restart),
    /// flushes what they loaded, and starts applying the outbox's own drops to them.
    private static func resumeBacklog(of link: OutboxLink, insights: InsightsQueue, experience: ExperienceQueue, logger: Logger) {
        let loaded = insights.resume() + experience.resume()
        if loaded > 0 {
            logger.info("queued the events recovered from the outbox", metadata: ["loaded": "\(loaded)", "stored": "\(link.outbox.count)"])
        }
        if insights.count > 0 { insights.startFlushIfAllowed() }
        link.forwardDrops { queue, ids, reason in
            let messageIds = (try? JSONValue(jsonText: ids).arrayValue)?.compactMap(\.stringValue) ?? []
            switch queue {
            case .insights: insights.removeMessages(messageIds, reason: reason)
            case .experience: experience.removeMessages(messageIds, reason: reason)
            }
        }
    }

    /// Closes the running engine, if any; the event streams stay open (re-initialize).
    private func releaseRuntime() {
        let old = runtime.withLock { current -> OptimizationRuntime? in
            defer { current = nil }
            return current
        }
        old?.close()
    }

    /// The entry to render for a visitor. Synchronous, thread-safe, never throws.
    ///
    /// - Parameters:
    ///   - baseline: the prepared entry (reuse it across calls: the engine caches it by content).
    ///   - selectedOptimizations: the visitor's selections; nil means the engine's CURRENT
    ///     selections (the last accepted Experience API response, preview overrides applied, or
    ///     the configured defaults; none known ⇒ nothing selected). Pass
    ///     `SelectedOptimizations/empty` for "nothing selected".
    /// - Returns: the baseline or variant. Before ``initialize(config:)``, and on any internal
    ///   failure (logged), the baseline.
    ///
    /// With a metrics backend (``Environment/metricsFactory``) a resolution that matched a
    /// selection is counted on `optimization_variant_resolutions_total` by experience id and
    /// variant index; without one it costs one check.
    public func resolveOptimizedEntry(
        baseline: ContentfulEntry, selectedOptimizations: SelectedOptimizations? = nil
    ) -> ResolvedOptimizedEntry {
        guard let runtime = runtime.withLock({ $0 }) else {
            return ResolvedOptimizedEntry(entry: baseline.renderedBaseline)
        }
        let resolved = runtime.resolve(baseline, selections: selectedOptimizations ?? runtime.channel.selections.current)
        if variantResolutions.isRecording, let selection = resolved.selectedOptimization { variantResolutions.record(selection: selection) }
        return resolved
    }

    /// Convenience for a one-off JSON value. It serializes `baseline` on every call; prefer a
    /// reused `ContentfulEntry` on hot paths. A value that is not an entry resolves to itself.
    /// `selectedOptimizations` nil means the current selections, `[]` nothing selected.
    public func resolveOptimizedEntry(
        baseline: JSONValue, selectedOptimizations: [JSONValue]? = nil
    ) -> ResolvedOptimizedEntry {
        guard let entry = try? ContentfulEntry(json: baseline) else {
            return ResolvedOptimizedEntry(entry: baseline)
        }
        // Explicit selections that cannot be serialized (nested too deep) select nothing; only
        // nil means the current selections.
        let selections = selectedOptimizations.map { (try? SelectedOptimizations($0)) ?? .empty }
        return resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
    }

    /// Internal access for tests and the benchmark.
    var currentRuntime: OptimizationRuntime? {
        runtime.withLock { $0 }
    }

    /// The store per ``Environment/storage`` (`directory` is its directory, if it has one); nil
    /// when persistence is disabled.
    private func makePersistence(directory: URL?) -> PersistenceCoordinator? {
        if case .custom(let custom) = environment.storage { return PersistenceCoordinator(store: custom) }
        guard let directory else { return nil }
        return PersistenceCoordinator(store: FileOptimizationStore(directory: directory, logger: environment.logger))
    }

    /// The directory of ``Environment/storage`` for `config`; nil for custom or disabled storage.
    private func storageDirectory(for config: OptimizationConfig) -> URL? {
        switch environment.storage {
        case .disabled, .custom:
            return nil
        case .directory(let directory):
            return directory
        case .automatic:
            return FileOptimizationStore.defaultDirectory(clientId: config.clientId, environment: config.environment ?? config.apiVersion.defaultEnvironment)
        }
    }

    /// Every state change, delivered before the call that caused it returns; a new stream per
    /// access, with no replay (read ``state`` for the current value). Finishes on ``destroy()``.
    public var stateChanges: AsyncStream<OptimizationState> {
        stateBroadcaster.makeStream()
    }

    private func runtimeStart() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1_000_000
    }
}
