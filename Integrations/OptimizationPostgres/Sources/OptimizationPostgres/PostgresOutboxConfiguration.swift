import EventOutbox

/// Bounds and leases of a ``PostgresOutboxStore``.
public struct PostgresOutboxConfiguration: Sendable {
    /// Most events kept (both queues, all replicas). Beyond it the oldest are dropped and reported
    /// (`OutboxDropReport.Reason.maxEvents`). Default 100,000.
    public var maxEvents: Int
    /// Most payload bytes kept. Beyond it the oldest are dropped and reported
    /// (`OutboxDropReport.Reason.maxBytes`). Default 64 MiB.
    public var maxBytes: Int
    /// How long a claim is leased to its replica. A replica that does not acknowledge, release or
    /// renew (``PostgresOutboxStore/renewLeases()``) its leases within it (it died) loses them:
    /// another replica takes the events over. Default 30 s.
    public var leaseDuration: Duration
    /// Called with every drop report (after the append's transaction committed). Keep it short;
    /// the payloads may carry visitor data: do not log them.
    public var onDrop: (@Sendable (OutboxDropReport) -> Void)?

    /// A configuration; each parameter sets the property of the same name.
    public init(
        maxEvents: Int = 100_000, maxBytes: Int = 64 << 20, leaseDuration: Duration = .seconds(30),
        onDrop: (@Sendable (OutboxDropReport) -> Void)? = nil
    ) {
        self.maxEvents = maxEvents
        self.maxBytes = maxBytes
        self.leaseDuration = leaseDuration
        self.onDrop = onDrop
    }
}

