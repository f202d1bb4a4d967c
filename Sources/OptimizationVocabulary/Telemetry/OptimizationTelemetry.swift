/// The names of everything the library reports to OpenTelemetry through swift-distributed-tracing
/// and swift-metrics: span names, span event names, attribute keys and metric names. They are
/// stable: dashboards, alerts and tests may match on them. The article “Observability”
/// (Optimization's documentation) lists them with their meaning, units and bounds.
///
/// The library depends on the APIs only (swift-distributed-tracing, swift-metrics), never on an
/// exporter: the application bootstraps one (swift-otel, for example) or injects a tracer and a
/// metrics factory through the faces' environments.
///
/// No attribute value and no metric label ever carries visitor data: no profile id, anonymous id,
/// trait, event payload or URL holding an id (``Attribute/featureFlagContextId`` is never
/// recorded).
public enum OptimizationTelemetry {
    /// The value of ``Attribute/featureFlagProviderName``.
    public static let providerName = "Contentful Optimization"
    /// The most distinct dimension sets one labelled metric of the library creates (per face
    /// or evaluator); later sets are counted under `_other`, so a metrics backend never sees an
    /// unbounded number of series.
    public static let maximumLabelSets = 256

    // MARK: Spans

    /// One span per call of an `OptimizationRequest` that goes through the service's pipeline
    /// (`identify`, `page`, `screen`, `track`, `trackView`, `trackClick`, `trackHover`,
    /// `trackFlagView`, `prepareRequestHandoff`, `commitReplay`); kind internal, a child of the
    /// task's current span. Its Experience API request span is its child.
    public static let requestSpanName = "optimization.request"
    /// One client span per Experience API HTTP request (every attempt, retries included).
    public static let experienceRequestSpanName = "Experience API request"
    /// One client span per Insights API HTTP request (one batch of events).
    public static let insightsRequestSpanName = "Insights API request"

    // MARK: Span events

    /// The OpenTelemetry feature-flag evaluation event, recorded on the task's current span by
    /// every flag read of both faces and every OFREP evaluation.
    public static let featureFlagEvaluationEventName = "feature_flag.evaluation"
    /// Recorded on the ``requestSpanName`` span of `prepareRequestHandoff` when a handoff is
    /// returned.
    public static let handoffPreparedEventName = "optimization.handoff.prepared"
    /// Recorded on the ``requestSpanName`` span of `commitReplay` when its replay was sent.
    public static let replayCommittedEventName = "optimization.replay.committed"

    /// Attribute keys of the library's spans and span events.
    public enum Attribute {
        /// HTTP method of a client span (`GET`, `POST`). OpenTelemetry HTTP convention.
        public static let httpRequestMethod = "http.request.method"
        /// The response status of a client span (integer). OpenTelemetry HTTP convention.
        public static let httpResponseStatusCode = "http.response.status_code"
        /// Which resend of the same request a client span is (integer ≥ 1; absent on the first
        /// attempt). OpenTelemetry HTTP convention.
        public static let httpRequestResendCount = "http.request.resend_count"
        /// The request's path with every identifier replaced by a placeholder, for example
        /// `/v2/organizations/{organization}/environments/{environment}/profiles/{profileId}`;
        /// never a query. OpenTelemetry URL convention.
        public static let urlTemplate = "url.template"
        /// The API host of a client span. OpenTelemetry server convention.
        public static let serverAddress = "server.address"
        /// The API port of a client span, when the URL names one (integer).
        public static let serverPort = "server.port"
        /// The class of a failure (`timeout`, `transport_error`, an HTTP status as text, or an
        /// OpenFeature error code in lower case on ``featureFlagEvaluationEventName``).
        /// OpenTelemetry error convention.
        public static let errorType = "error.type"
        /// The answer's `Retry-After`, in milliseconds (integer), when it had one.
        public static let retryAfterMilliseconds = "optimization.retry_after_ms"
        /// `experience` or `insights`.
        public static let api = "optimization.api"
        /// How a client span's request ended (`success`, `retry`, `drop`, `disable`,
        /// `transport_error`, `cancelled`) or how a ``requestSpanName`` call ended (`delivered`,
        /// `accepted`, `blocked`, `timeout`, `circuit_open`, `failed`, `refused`; `mixed` for calls
        /// that went together with different outcomes).
        public static let outcome = "optimization.outcome"
        /// The `OptimizationRequest` method a ``requestSpanName`` span stands for (`page`,
        /// `commitReplay`, …).
        public static let requestMethod = "optimization.request.method"
        /// The number of calls a ``requestSpanName`` span covers when they went together
        /// (`OptimizationRequest.trackViews(_:)`; absent for one call), integer.
        public static let callCount = "optimization.request.call_count"
        /// The latency budget of a ``requestSpanName`` call's Experience request, in milliseconds
        /// (integer).
        public static let budgetMilliseconds = "optimization.budget_ms"
        /// How long a ``requestSpanName`` call waited for the same profile's earlier Experience
        /// call, in milliseconds (integer; absent when it did not wait).
        public static let profileWaitMilliseconds = "optimization.profile_wait_ms"
        /// True when a ``requestSpanName`` call had to wait for a busy engine to interpret its
        /// Experience answer.
        public static let engineWaited = "optimization.engine_waited"
        /// True when a ``requestSpanName`` call went to the Experience API (false: Insights only).
        public static let callsExperience = "optimization.calls_experience"
        /// The number of events in a handoff's replay (``handoffPreparedEventName``,
        /// ``replayCommittedEventName``), integer.
        public static let replayEventCount = "optimization.replay.event_count"
        /// The cache scope of a prepared handoff (`private-request`, `public-permutation`,
        /// `static`).
        public static let handoffCacheScope = "optimization.handoff.cache_scope"
        /// The flag's key. OpenTelemetry feature-flag convention.
        public static let featureFlagKey = "feature_flag.key"
        /// The evaluated variant: `baseline` or `variant-<index>`; absent when the flag is
        /// absent. OpenTelemetry feature-flag convention.
        public static let featureFlagResultVariant = "feature_flag.result.variant"
        /// Why the value was chosen, an OpenTelemetry well-known value: `static`, `default`,
        /// `targeting_match`, `split`, `cached`, `disabled`, `unknown`, `error`.
        public static let featureFlagResultReason = "feature_flag.result.reason"
        /// ``OptimizationTelemetry/providerName``. OpenTelemetry feature-flag convention.
        public static let featureFlagProviderName = "feature_flag.provider.name"
        /// The evaluation context's id (the visitor's profile id). Visitor data: the library
        /// never records it.
        public static let featureFlagContextId = "feature_flag.context.id"
    }

    /// Metric names (swift-metrics labels; the project's Prometheus-style naming). The article
    /// “Observability” gives each its OpenTelemetry name and unit.
    public enum Metric {
        /// Counter of flag evaluations; dimensions `key`, `variant`, `reason` (at most
        /// ``OptimizationTelemetry/maximumLabelSets`` distinct sets; the rest are counted with
        /// every dimension `_other`).
        public static let flagEvaluations = "optimization_flag_evaluations_total"
        /// Counter of resolutions that rendered a variant or the baseline of a selected
        /// experience; dimensions `experience` (experience id), `variant` (variant index; `0`
        /// the baseline), bounded like ``flagEvaluations``.
        public static let variantResolutions = "optimization_variant_resolutions_total"
        /// Timer of Experience calls (nanoseconds as recorded; seconds in OpenTelemetry).
        public static let experienceRequestDuration = "optimization_experience_request_duration"
        /// Gauge of the Insights events queued in memory.
        public static let insightsQueueDepth = "optimization_insights_queue_depth"
        /// Gauge (0 or 1) of an API's circuit; dimension `api`.
        public static let circuitOpen = "optimization_circuit_open"
    }
}
