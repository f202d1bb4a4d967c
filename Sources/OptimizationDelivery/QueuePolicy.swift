import HostPlatform
import OptimizationJSON
import OrderedCollections

/// Retry, backoff and circuit-breaker settings of the delivery queues. Every field is
/// optional; nil uses the core's default. The core normalises the values: durations are sent in
/// whole milliseconds and must be at least 1 ms (anything else ⇒ default), `maxBackoff` is
/// raised to `baseBackoff`, `jitterRatio` is clamped to [0, 1]. Times run on the client's (or
/// service's) clock.
public struct QueueFlushPolicy: Sendable, Equatable {
    /// Periodic Insights flush while events are queued. Default 30 s.
    public var flushInterval: Duration?
    /// Delay after the first failure. Default 500 ms.
    public var baseBackoff: Duration?
    /// Cap of the exponential backoff. Default 30 s.
    public var maxBackoff: Duration?
    /// Extra random delay, as a fraction of the backoff. Default 0.2.
    public var jitterRatio: Double?
    /// Consecutive failures after which the circuit opens. Default 8.
    public var maxConsecutiveFailures: Int?
    /// How long an open circuit sends nothing. Default 120 s.
    public var circuitOpenDuration: Duration?

    /// Creates a flush policy; every argument defaults to nil (the core's default).
    /// - Parameters:
    ///   - flushInterval: periodic Insights flush while events are queued; nil uses 30 s.
    ///   - baseBackoff: delay after the first failure; nil uses 500 ms.
    ///   - maxBackoff: cap of the exponential backoff (raised to `baseBackoff`); nil uses 30 s.
    ///   - jitterRatio: extra random delay as a fraction of the backoff, clamped to [0, 1]; nil
    ///     uses 0.2.
    ///   - maxConsecutiveFailures: consecutive failures after which the circuit opens; nil uses 8.
    ///   - circuitOpenDuration: how long an open circuit sends nothing; nil uses 120 s.
    public init(
        flushInterval: Duration? = nil, baseBackoff: Duration? = nil, maxBackoff: Duration? = nil, jitterRatio: Double? = nil,
        maxConsecutiveFailures: Int? = nil, circuitOpenDuration: Duration? = nil
    ) {
        self.flushInterval = flushInterval
        self.baseBackoff = baseBackoff
        self.maxBackoff = maxBackoff
        self.jitterRatio = jitterRatio
        self.maxConsecutiveFailures = maxConsecutiveFailures
        self.circuitOpenDuration = circuitOpenDuration
    }
}

/// Delivery queue settings and callbacks. Part of `OptimizationConfig`.
///
/// The numbers are read by the Swift delivery queues (``DeliveryPolicy``), never by the shared
/// core. The callbacks receive the same ``QueueEvent``s as `OptimizationClient/queueEvents`. They
/// run synchronously on the thread of the queue that reports (a caller's, a timer's or a
/// request's): keep them short and never call back into the client from them (hand work to a
/// task instead). They do not take part in `==` (two policies with the same numbers are equal).
public struct QueuePolicy: Sendable, Equatable {
    /// Retry, backoff and circuit settings (both queues).
    public var flush: QueueFlushPolicy?
    /// Capacity of the Experience queue in memory. Default 100. Without a durable outbox
    /// (storage `.disabled`) it is a cap: beyond it the oldest events not in flight are dropped
    /// (reported as ``QueueEventType/offlineDrop``). With an outbox it is the window of the stored
    /// backlog held in memory: newer events wait on disk and nothing is dropped for room.
    public var offlineMaxEvents: Int?
    /// Experience events dropped because the queue was full.
    public var onOfflineDrop: (@Sendable (QueueEvent) -> Void)?
    /// A failed flush (retried after `context.retryDelayMs`).
    public var onFlushFailure: (@Sendable (QueueEvent) -> Void)?
    /// The circuit opened: nothing is sent for `context.retryDelayMs`.
    public var onCircuitOpen: (@Sendable (QueueEvent) -> Void)?
    /// A flush succeeded after failures.
    public var onFlushRecovered: (@Sendable (QueueEvent) -> Void)?
    /// A batch the API refused with a 4xx (other than 401/403/404) was dropped, or Insights events
    /// too large to send were dropped unsent (``QueueEventType/batchDropped``).
    public var onBatchDropped: (@Sendable (QueueEvent) -> Void)?
    /// 401/403/404: delivery to that API stopped for this engine (Insights: only after
    /// ``DeliveryPolicy/maxConsecutiveCredentialRefusals`` in a row).
    public var onDeliveryDisabled: (@Sendable (QueueEvent) -> Void)?

    /// Creates a queue policy; every argument defaults to nil (the default, or no callback). The
    /// callbacks run synchronously on the reporting queue's thread (see ``QueuePolicy``).
    /// - Parameters:
    ///   - flush: retry, backoff and circuit settings of both queues.
    ///   - offlineMaxEvents: capacity of the Experience queue in memory; nil uses 100.
    ///   - onOfflineDrop: called when Experience events are dropped because the queue is full.
    ///   - onFlushFailure: called when a flush fails (it is retried after `context.retryDelayMs`).
    ///   - onCircuitOpen: called when the circuit opens (nothing is sent for `context.retryDelayMs`).
    ///   - onFlushRecovered: called when a flush succeeds after failures.
    ///   - onBatchDropped: called when a batch the API refused with a 4xx (other than
    ///     401/403/404) is dropped.
    ///   - onDeliveryDisabled: called when a 401/403/404 stops delivery to that API for this engine.
    public init(
        flush: QueueFlushPolicy? = nil, offlineMaxEvents: Int? = nil,
        onOfflineDrop: (@Sendable (QueueEvent) -> Void)? = nil, onFlushFailure: (@Sendable (QueueEvent) -> Void)? = nil,
        onCircuitOpen: (@Sendable (QueueEvent) -> Void)? = nil, onFlushRecovered: (@Sendable (QueueEvent) -> Void)? = nil,
        onBatchDropped: (@Sendable (QueueEvent) -> Void)? = nil, onDeliveryDisabled: (@Sendable (QueueEvent) -> Void)? = nil
    ) {
        self.flush = flush
        self.offlineMaxEvents = offlineMaxEvents
        self.onOfflineDrop = onOfflineDrop
        self.onFlushFailure = onFlushFailure
        self.onCircuitOpen = onCircuitOpen
        self.onFlushRecovered = onFlushRecovered
        self.onBatchDropped = onBatchDropped
        self.onDeliveryDisabled = onDeliveryDisabled
    }

    public static func == (lhs: QueuePolicy, rhs: QueuePolicy) -> Bool {
        lhs.flush == rhs.flush && lhs.offlineMaxEvents == rhs.offlineMaxEvents
    }

    /// The callback for `type`, if set.
    package func callback(for type: QueueEventType) -> (@Sendable (QueueEvent) -> Void)? {
        switch type {
        case .offlineDrop: return onOfflineDrop
        case .flushFailure: return onFlushFailure
        case .circuitOpen: return onCircuitOpen
        case .flushRecovered: return onFlushRecovered
        case .batchDropped: return onBatchDropped
        case .deliveryDisabled: return onDeliveryDisabled
        }
    }
}
