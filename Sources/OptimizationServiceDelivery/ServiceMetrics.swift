import CoreMetrics
import Dispatch
import OptimizationVocabulary
import OptimizationJSON
import Tracing

/// The metrics of an `OptimizationService` (swift-metrics). Without a bootstrapped backend
/// (`MetricsSystem.bootstrap`) or an injected factory they are no-ops. Names and dimensions (also
/// in “Observability” (Optimization’s documentation), with their OpenTelemetry names and units):
///
/// | name | type | dimensions |
/// |---|---|---|
/// | `optimization_resolve_duration` | timer (ns) | — |
/// | `optimization_resolves_total` | counter | `outcome`: variant, baseline, empty_variant, fallback |
/// | `optimization_variant_resolutions_total` | counter | `experience` (experience id), `variant` (index, `0` the baseline); at most 256 sets, then `_other` |
/// | `optimization_flag_evaluations_total` | counter | `key`, `variant`, `reason`; at most 256 sets, then `_other` (`flagEvaluations`) |
/// | `optimization_engine_pool_wait` | timer (ns), only calls that had to wait | — |
/// | `optimization_engine_pool_busy` | gauge | — |
/// | `optimization_experience_requests_total` | counter | `outcome`: success, timeout, circuit_open, failed, refused |
/// | `optimization_experience_request_duration` | timer (ns) | — |
/// | `optimization_events_total` | counter | `method`, `result`: accepted, blocked |
/// | `optimization_insights_batches_total` | counter | `result`: sent, retried, dropped |
/// | `optimization_insights_queue_depth` | gauge | — |
/// | `optimization_circuit_open` | gauge (0/1) | `api`: experience, insights |
/// | `optimization_shared_outbox_events_total` | counter | `result`: stored, memory (the store was away) |
/// | `optimization_shared_outbox_erased_events_total` | counter | — (queued events dropped because their profile was erased, read from the erasure log) |
/// | `optimization_shared_outbox_dead_letters_total` | counter | — (stored events the delivery queues refused too often, moved aside in the store) |
/// | `optimization_insights_refused_events_total` | counter | — (Insights events the shared core built without a profile, an event or a `messageId`: refused, and the call throws) |
///
/// Every metric object is created once, here; recording is lock-free in the no-op case.
package final class ServiceMetrics: Sendable {
    package let resolveDuration: Timer
    private let variantResolves: Counter
    private let baselineResolves: Counter
    private let emptyVariantResolves: Counter
    private let fallbackResolves: Counter
    package let poolWait: Timer
    /// Nil when metrics go nowhere (the no-op factory): then the pool counts nothing per call.
    package let poolBusy: Gauge?
    /// False for the no-op factory: the hot paths then skip the work of measuring.
    package let isRecording: Bool
    private let experienceRequests: [String: Counter]
    package let experienceDuration: Timer
    private let events: [String: Counter]
    private let insightsBatches: [String: Counter]
    package let queueDepth: Gauge
    private let circuits: [String: Gauge]
    private let sharedOutboxStored: Counter
    private let sharedOutboxInMemory: Counter
    private let sharedOutboxErased: Counter
    private let sharedOutboxDeadLetters: Counter
    private let refusedEvents: Counter
    /// Resolutions that matched a selected experience, by experience id and variant index.
    private let variantResolutions: VariantResolutionCounter
    /// Flag evaluations of the service's requests: their events and counter.
    package let flagEvaluations: FeatureFlagTelemetry

    /// - Parameters:
    ///   - factory: creates every metric.
    ///   - tracer: receives the flag evaluations' events; default the no-op tracer.
    package init(factory: any MetricsFactory, tracer: any Tracer = NoOpTracer()) {
        variantResolutions = VariantResolutionCounter(factory: factory)
        flagEvaluations = FeatureFlagTelemetry(tracer: tracer, metricsFactory: factory)
        resolveDuration = Timer(label: "optimization_resolve_duration", dimensions: [], factory: factory)
        func resolves(_ outcome: ResolutionOutcome) -> Counter {
            Counter(label: "optimization_resolves_total", dimensions: [("outcome", outcome.rawValue)], factory: factory)
        }
        variantResolves = resolves(.variant)
        baselineResolves = resolves(.baseline)
        emptyVariantResolves = resolves(.emptyVariant)
        fallbackResolves = resolves(.fallback)
        poolWait = Timer(label: "optimization_engine_pool_wait", dimensions: [], factory: factory)
        isRecording = !(factory is NOOPMetricsHandler)
        poolBusy = !isRecording ? nil : Gauge(label: "optimization_engine_pool_busy", dimensions: [], factory: factory)
        experienceRequests = Dictionary(uniqueKeysWithValues: ["success", "timeout", "circuit_open", "failed", "refused"].map {
            ($0, Counter(label: "optimization_experience_requests_total", dimensions: [("outcome", $0)], factory: factory))
        })
        experienceDuration = Timer(label: "optimization_experience_request_duration", dimensions: [], factory: factory)
        var events: [String: Counter] = [:]
        // Every event method the faces offer, from the one list of them.
        for method in EventMethod.allCases.map(\.rawValue) {
            for result in ["accepted", "blocked"] {
                events[method + "/" + result] = Counter(
                    label: "optimization_events_total", dimensions: [("method", method), ("result", result)], factory: factory)
            }
        }
        self.events = events
        insightsBatches = Dictionary(uniqueKeysWithValues: ["sent", "retried", "dropped"].map {
            ($0, Counter(label: "optimization_insights_batches_total", dimensions: [("result", $0)], factory: factory))
        })
        queueDepth = Gauge(label: "optimization_insights_queue_depth", dimensions: [], factory: factory)
        circuits = Dictionary(uniqueKeysWithValues: ["experience", "insights"].map {
            ($0, Gauge(label: "optimization_circuit_open", dimensions: [("api", $0)], factory: factory))
        })
        sharedOutboxStored = Counter(label: "optimization_shared_outbox_events_total", dimensions: [("result", "stored")], factory: factory)
        sharedOutboxInMemory = Counter(label: "optimization_shared_outbox_events_total", dimensions: [("result", "memory")], factory: factory)
        sharedOutboxErased = Counter(label: "optimization_shared_outbox_erased_events_total", dimensions: [], factory: factory)
        sharedOutboxDeadLetters = Counter(label: "optimization_shared_outbox_dead_letters_total", dimensions: [], factory: factory)
        refusedEvents = Counter(label: "optimization_insights_refused_events_total", dimensions: [], factory: factory)
    }

    /// Insights events of one call: stored in the shared outbox, or queued in memory because the
    /// store was away.
    package func sharedOutboxEvents(stored: Bool, count: Int) {
        (stored ? sharedOutboxStored : sharedOutboxInMemory).increment(by: count)
    }

    /// Queued Insights events dropped from memory because the shared outbox's erasure log named
    /// their profile.
    package func sharedOutboxErasedInMemory(count: Int) {
        sharedOutboxErased.increment(by: count)
    }

    /// Stored events moved to the shared outbox's dead letters.
    package func sharedOutboxDeadLettered(count: Int) {
        sharedOutboxDeadLetters.increment(by: count)
    }

    /// Insights events the delivery queue refused and dropped.
    package func insightsRefused(count: Int) {
        refusedEvents.increment(by: count)
    }

    /// One resolution: `variant` when a variant entry renders instead of the baseline.
    package func resolved(_ outcome: ResolutionOutcome, nanoseconds: UInt64) {
        resolveDuration.recordNanoseconds(Int64(clamping: nanoseconds))
        switch outcome {
        case .variant: variantResolves.increment()
        case .baseline: baselineResolves.increment()
        case .emptyVariant: emptyVariantResolves.increment()
        case .fallback: fallbackResolves.increment()
        }
    }

    /// One resolution that matched a selection (`ResolvedOptimizedEntry.selectedOptimization`,
    /// `{experienceId, variantIndex}`): counted by experience and variant index. A selection
    /// without an experience id counts nothing.
    package func variantResolved(selection: JSONValue) {
        variantResolutions.record(selection: selection)
    }

    /// Records how one Experience call went (the outcomes an Experience call can have; the others
    /// record nothing).
    package func experience(_ outcome: EventOutcome, nanoseconds: UInt64) {
        let name: String
        switch outcome {
        case .delivered: name = "success"
        case .accepted, .blocked: return
        case .timedOut: name = "timeout"
        case .circuitOpen: name = "circuit_open"
        case .failed: name = "failed"
        case .refused: name = "refused"
        }
        experienceRequests[name]?.increment()
        if outcome != .circuitOpen { experienceDuration.recordNanoseconds(Int64(clamping: nanoseconds)) }
    }

    package func event(_ method: String, accepted: Bool) {
        events[method + "/" + (accepted ? "accepted" : "blocked")]?.increment()
    }

    /// `result`: "sent", "retried" or "dropped".
    package func insightsBatch(_ result: String) {
        insightsBatches[result]?.increment()
    }

    package func circuit(_ api: String, isOpen: Bool) {
        circuits[api]?.record(isOpen ? 1 : 0)
    }
}
