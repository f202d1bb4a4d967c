
/// What a delivery queue gathered under its lock and reports after it: events that left the
/// queue for good (acknowledged in the outbox, told to `onRemoved`) and queue events.
struct DeliveryReport<Item: DeliveryItem> {
    var queueEvents: [QueueEvent] = []
    var removals: [([Item], InsightsQueue.Removal)] = []

    /// Delivers the report outside the lock, in order: per removal the outbox acknowledgement then
    /// `onRemoved`; then the queue events, unless `isClosed()` (a queue reports nothing after
    /// ``InsightsQueue/close()``; the lock is taken only when there is something to report).
    func deliver(
        outbox: DurableOutbox?, isClosed: () -> Bool, onQueueEvent: (QueueEvent) -> Void,
        onRemoved: ([Item], InsightsQueue.Removal) -> Void
    ) {
        for (items, reason) in removals where !items.isEmpty {
            if let outbox {
                let sequences = items.compactMap(\.sequence)
                if !sequences.isEmpty { outbox.acknowledge(sequences: sequences) }
            }
            onRemoved(items, reason)
        }
        if !queueEvents.isEmpty, !isClosed() {
            for event in queueEvents { onQueueEvent(event) }
        }
    }
}
