/// The two delivery queues an event belongs to.
public enum EventQueue: String, Sendable, CaseIterable {
    /// Identify, page, screen, track and sticky views (Experience API).
    case experience
    /// Views, clicks, hovers and flag views (Insights API).
    case insights
}
