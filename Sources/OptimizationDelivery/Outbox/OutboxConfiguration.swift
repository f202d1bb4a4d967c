/// Limits and durability of a ``DurableOutbox``.
public struct OutboxConfiguration: Sendable {
    /// When appended events reach the disk. Default ``OutboxDurability/default``.
    public var durability: OutboxDurability
    /// Most events kept (both queues together, acknowledged ones not counted). Beyond it the
    /// oldest are dropped and reported (``OutboxDropReport/Reason/maxEvents``). Default 10,000.
    public var maxEvents: Int
    /// Most bytes of undelivered events kept (framed size on disk, both queues). Beyond it the
    /// oldest are dropped and reported (``OutboxDropReport/Reason/maxBytes``). Default 16 MiB.
    public var maxBytes: Int
    /// How long an undelivered event is kept after its `acceptedAt`, measured on the
    /// outbox's clock; then it is dropped and reported (``OutboxDropReport/Reason/expired``).
    /// Default 7 days.
    public var timeToLive: Duration
    /// A segment file is closed and a new one started once it holds this many bytes. Default 1 MiB.
    public var segmentBytes: Int
    /// Called synchronously with every drop report, after the outbox's lock is released (also
    /// for drops found while opening). Keep it short. The same reports go to
    /// ``DurableOutbox/drops``.
    public var onDrop: (@Sendable (OutboxDropReport) -> Void)?

    /// A configuration; each parameter sets the property of the same name (defaults: 10,000
    /// events, 16 MiB, 7 days, 1 MiB segments, ``OutboxDurability/default``).
    public init(
        durability: OutboxDurability = .default, maxEvents: Int = 10_000, maxBytes: Int = 16 << 20,
        timeToLive: Duration = .seconds(7 * 24 * 3_600), segmentBytes: Int = 1 << 20,
        onDrop: (@Sendable (OutboxDropReport) -> Void)? = nil
    ) {
        self.durability = durability
        self.maxEvents = maxEvents
        self.maxBytes = maxBytes
        self.timeToLive = timeToLive
        self.segmentBytes = segmentBytes
        self.onDrop = onDrop
    }
}
