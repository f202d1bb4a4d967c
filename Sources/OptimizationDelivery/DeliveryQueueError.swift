
/// Why the delivery path could not take events.
public enum DeliveryQueueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The queue was closed: nothing more is accepted.
    case closed
    /// The durable outbox could not store (or erase) an event; the call's event was not accepted.
    case notStored(OutboxError)

    public var description: String {
        switch self {
        case .closed: return "the delivery queue is closed"
        case .notStored(let error): return "the outbox could not store the event: \(error)"
        }
    }
}
