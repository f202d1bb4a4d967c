/// The event calls both faces offer (`OptimizationClient` and `OptimizationRequest`, through
/// `EventRecording`), named as the shared core names them.
public enum EventMethod: String, Sendable, CaseIterable {
    /// `identify`: who the visitor is (Experience API).
    case identify
    /// `page`: a page view (Experience API).
    case page
    /// `screen`: a screen view (Experience API).
    case screen
    /// `track`: a custom event (Experience API).
    case track
    /// `trackView`: an entry view (Insights; a sticky view goes to the Experience API first).
    case trackView
    /// `trackClick`: a click on an entry (Insights).
    case trackClick
    /// `trackHover`: a hover over an entry (Insights).
    case trackHover
    /// `trackFlagView`: a flag's value was shown (Insights).
    case trackFlagView
    /// `trackNodeView`: an Experiences entity was seen (Insights `exo_node_view`; API v2).
    case trackNodeView
    /// `trackNodeClick`: an Experiences entity was clicked (Insights `exo_node_click`; API v2).
    case trackNodeClick
    /// `trackNodeHover`: the pointer rested on an Experiences entity (Insights `exo_node_hover`;
    /// API v2).
    case trackNodeHover
}
