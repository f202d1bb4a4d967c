import Foundation
import OptimizationEngine

/// Where an ``OptimizationClient`` keeps consent and profile continuity across restarts.
public enum OptimizationStorage: Sendable {
    /// A ``FileOptimizationStore`` in ``FileOptimizationStore/defaultDirectory(clientId:environment:environmentVariables:)``
    /// (under `$XDG_STATE_HOME`, else `~/.local/state`), one directory per client id and
    /// environment. The default.
    case automatic
    /// A ``FileOptimizationStore`` in this directory.
    case directory(URL)
    /// The application's own store.
    case custom(any OptimizationStore)
    /// Nothing is persisted (for example a service rendering for many visitors, or a CLI run).
    case disabled
}
