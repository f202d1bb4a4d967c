/// Which of the two delivery queues an event belongs to (an outbox record's `queue`).
public enum EventQueueKind: String, Sendable, CaseIterable {
    /// Identify, page, screen, track and sticky views (Experience API).
    case experience
    /// Views, clicks, hovers and flag views (Insights API).
    case insights
}

/// The former name of ``EventQueueKind``.
@available(*, deprecated, renamed: "EventQueueKind")
public typealias EventQueue = EventQueueKind
