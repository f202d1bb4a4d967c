/// Events the outbox dropped by itself (a bound or the time to live), oldest first. Events the
/// caller removes with ``DurableOutbox/acknowledge(sequences:)`` are not reported here.
public struct OutboxDropReport: Sendable, Equatable {
    /// Why they were dropped.
    public enum Reason: String, Sendable, Equatable {
        /// ``OutboxConfiguration/maxEvents`` was reached.
        case maxEvents
        /// ``OutboxConfiguration/maxBytes`` was reached.
        case maxBytes
        /// Older than ``OutboxConfiguration/timeToLive``.
        case expired
    }

    /// Why the events were dropped.
    public let reason: Reason
    /// The dropped events, oldest first (payloads may carry visitor data: do not log them).
    public let records: [OutboxRecord]
    /// When: milliseconds since the Unix epoch on the outbox's clock.
    public let timestamp: Double

    /// A report of `records` dropped for `reason` at `timestamp` (milliseconds since the epoch).
    public init(reason: Reason, records: [OutboxRecord], timestamp: Double) {
        self.reason = reason
        self.records = records
        self.timestamp = timestamp
    }
}
