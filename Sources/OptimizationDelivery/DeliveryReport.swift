
/// What a delivery queue gathered under its lock and reports after it: events that left the
/// queue for good (acknowledged in the outbox, told to `onRemoved`) and queue events.
struct DeliveryReport<Item: DeliveryItem> {
    /// The queue events, each with the events whose payloads its `droppedEvents` lists: those
    /// are read from their JSON text in ``deliver(outbox:isClosed:onQueueEvent:onRemoved:)``,
    /// outside the lock (a full queue drops an event on every accept).
    private(set) var queueEvents: [(event: QueueEvent, dropped: [Item])] = []
    var removals: [([Item], InsightsQueue.Removal)] = []

    /// Reports `event` after the lock.
    mutating func report(_ event: QueueEvent) {
        queueEvents.append((event, []))
    }

    /// Reports `event` after the lock with the payloads of `dropped` as its context's
    /// `droppedEvents` (where its context has that member, else at its end).
    mutating func report(_ event: QueueEvent, listing dropped: [Item]) {
        queueEvents.append((event, dropped))
    }

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
            for (event, dropped) in queueEvents { onQueueEvent(Self.listing(dropped, in: event)) }
        }
    }

    /// `event` with the payloads of `dropped` as its context's `droppedEvents`.
    private static func listing(_ dropped: [Item], in event: QueueEvent) -> QueueEvent {
        guard !dropped.isEmpty, case .object(var context) = event.context else { return event }
        context["droppedEvents"] = .array(dropped.map(\.eventValue))
        return QueueEvent(type: event.type, queue: event.queue, context: .object(context), timestamp: event.timestamp)
    }
}
