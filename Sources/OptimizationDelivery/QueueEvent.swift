import OptimizationJSON

/// What happened in a delivery queue (`OptimizationClient/queueEvents`, ``QueuePolicy``).
public enum QueueEventType: String, Sendable, CaseIterable {
    /// The Experience queue was full: the oldest events were dropped. Context: `droppedCount`,
    /// `droppedEvents` (oldest first), `maxEvents`, `queuedEvents`.
    case offlineDrop
    /// A flush failed (408/429/5xx or a transport error) and will be retried. Context:
    /// `consecutiveFailures`, `queuedBatches`, `queuedEvents`, `retryDelayMs`; for an Insights
    /// 401/403/404 not yet repeated `DeliveryPolicy/maxConsecutiveCredentialRefusals` times in a
    /// row, also `status` and `credentialRefusals` (the count so far).
    case flushFailure
    /// Too many consecutive failures: nothing is sent for `retryDelayMs`. Context as
    /// ``flushFailure``.
    case circuitOpen
    /// A flush succeeded after failures. Context: `consecutiveFailures` (before the success).
    case flushRecovered
    /// The API refused a batch with a 4xx other than 401/403/404 (Insights: any 4xx but 408/429
    /// for one profile's request, found by bisecting a refused request of several profiles); its
    /// events were dropped. Also (Insights, `status` 413) events too large to send within
    /// `DeliveryPolicy/insightsMaxRequestBytes`, dropped unsent. Context: `status`, `reason`,
    /// `droppedCount`, `droppedEvents`.
    case batchDropped
    /// The API answered 401, 403 or 404 (Insights: `DeliveryPolicy/maxConsecutiveCredentialRefusals`
    /// times in a row, no 2xx between): delivery to it stopped for this engine (until the next
    /// `initialize`), queued events were discarded. Context: `status`, `reason`, `droppedCount`.
    case deliveryDisabled
}

/// One report of a delivery queue.
public struct QueueEvent: Sendable, Equatable {
    /// The two delivery queues (`EventQueueKind`).
    public typealias Queue = EventQueueKind

    /// What happened.
    public let type: QueueEventType
    /// Which queue it happened in.
    public let queue: Queue
    /// Details, by type (see ``QueueEventType``). Event payloads in it may carry visitor data.
    public let context: JSONValue
    /// When it happened: milliseconds since the Unix epoch on the client's clock.
    public let timestamp: Double

    /// Creates a report, as the engine does for `OptimizationClient/queueEvents` and the
    /// ``QueuePolicy`` callbacks.
    /// - Parameters:
    ///   - type: what happened.
    ///   - queue: which queue it happened in.
    ///   - context: details, by type (see ``QueueEventType``).
    ///   - timestamp: when it happened, in milliseconds since the Unix epoch.
    public init(type: QueueEventType, queue: Queue, context: JSONValue, timestamp: Double) {
        self.type = type
        self.queue = queue
        self.context = context
        self.timestamp = timestamp
    }
}
