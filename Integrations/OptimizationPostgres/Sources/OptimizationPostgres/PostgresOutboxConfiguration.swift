import Optimization

/// Bounds and leases of a ``PostgresOutboxStore``.
public struct PostgresOutboxConfiguration: Sendable {
    /// Most events kept (both queues, all replicas). Beyond it the oldest are dropped and reported
    /// (`OutboxDropReport.Reason.maxEvents`). Default 100,000. Checked periodically, not on every
    /// append (see ``boundsCheckInterval``): the table may exceed it for a moment.
    public var maxEvents: Int
    /// Most payload bytes kept. Beyond it the oldest are dropped and reported
    /// (`OutboxDropReport.Reason.maxBytes`). Default 64 MiB. Checked like ``maxEvents``.
    public var maxBytes: Int
    /// How long a claim is leased to its replica. A replica that does not acknowledge, release or
    /// renew (``PostgresOutboxStore/renewLeases()``) its leases within it (it died) loses them:
    /// another replica takes the events over. Default 30 s.
    public var leaseDuration: Duration
    /// Longest time between two checks of the bounds by this store (this replica): an append
    /// committed at least this long after the store's previous check counts the table's events
    /// and bytes and drops the oldest beyond ``maxEvents`` / ``maxBytes``, in its transaction.
    /// The first append of a store always checks. Default 1 s; `.zero` checks on every append.
    ///
    /// Counting scans the whole table, so it is not done on every append: between two checks the
    /// table may exceed the bounds by what all replicas append in that time (at most about
    /// ``boundsCheckEvents`` per replica, or one interval's worth).
    public var boundsCheckInterval: Duration
    /// Most events this store appends between two checks of the bounds: the append that reaches
    /// it checks them, whatever ``boundsCheckInterval`` says. Default 1,000; 1 checks on every
    /// append.
    public var boundsCheckEvents: Int
    /// How long an erasure stays in the erasure log (`<schema>.outbox_erasures`) that every
    /// replica reads on each poll (``PostgresOutboxStore/erasures(after:)``); an erasure prunes
    /// the older entries. A replica that did not read the log for longer than this checks which
    /// of its claimed events are still stored instead. Default 1 hour; at least 1 second (a
    /// shorter value is raised to it).
    public var erasureRetention: Duration
    /// Called with every drop report (after the append's transaction committed, before the
    /// appends of that transaction return). Keep it short; the payloads may carry visitor data:
    /// do not log them.
    public var onDrop: (@Sendable (OutboxDropReport) -> Void)?

    /// A configuration; each parameter sets the property of the same name.
    public init(
        maxEvents: Int = 100_000, maxBytes: Int = 64 << 20, leaseDuration: Duration = .seconds(30),
        boundsCheckInterval: Duration = .seconds(1), boundsCheckEvents: Int = 1_000,
        erasureRetention: Duration = .seconds(3600), onDrop: (@Sendable (OutboxDropReport) -> Void)? = nil
    ) {
        self.maxEvents = maxEvents
        self.maxBytes = maxBytes
        self.leaseDuration = leaseDuration
        self.boundsCheckInterval = boundsCheckInterval
        self.boundsCheckEvents = boundsCheckEvents
        self.erasureRetention = erasureRetention
        self.onDrop = onDrop
    }
}
