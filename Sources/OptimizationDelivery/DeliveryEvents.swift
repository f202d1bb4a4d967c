import OptimizationJSON

/// How one delivery queue keeps its events in memory, for ``DeliveryQueueCore``: the Experience
/// queue in one line of events, the Insights queue in per-profile batches. The core owns ids,
/// capacity, the outbox window, retries and disabling; the conforming type only stores, finds and
/// removes events in its own order.
///
/// **Threading.** A value under its queue's lock; nothing here blocks or calls out.
protocol DeliveryEvents: Sendable {
    /// One event in memory.
    associatedtype Item: DeliveryItem
    /// What the queue takes in for one event, before it has an id.
    associatedtype Entry: Sendable

    /// Empty.
    init()

    /// Events in memory (in flight included).
    var count: Int { get }

    /// Puts one event at the end of its place in the queue's order.
    mutating func append(_ entry: Entry, id: UInt64, sequence: UInt64?)

    /// Removes the events `shouldRemove` picks; returns them, oldest first.
    mutating func removeAll(where shouldRemove: (Item) -> Bool) -> [Item]

    /// Removes the oldest event whose id is not in `sparing`; nil when every event is spared.
    mutating func removeOldest(sparing: Set<UInt64>) -> Item?

    /// Removes every event; returns them, oldest first. What is not an event (the Insights
    /// visitor's profile) stays.
    mutating func removeEverything() -> [Item]

    /// Called after stored events were loaded into memory (the Insights queue moves held events
    /// into the visitor's profile).
    mutating func loaded()

    /// The entry a stored record holds; nil when the record cannot be read as one.
    static func entry(stored record: OutboxRecord) -> Entry?

    /// A stored record as an event that leaves the queue unsent (delivery disabled); id 0.
    static func discarded(stored record: OutboxRecord) -> Item
}

/// One event in a delivery queue's memory.
protocol DeliveryItem: Sendable {
    /// Its place in the queue (unique among the events in memory).
    var id: UInt64 { get }
    /// Its sequence in the durable outbox, if it was stored.
    var sequence: UInt64? { get }
    /// The event's `messageId`.
    var messageId: String { get }
    /// The event as a value, for reports that list dropped events.
    var eventValue: JSONValue { get }
}
