/// Errors of ``OptimizationClient``.
public enum OptimizationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The client has not been initialized (or was destroyed).
    case notInitialized
    /// The shared JavaScript core reported an error.
    case bridgeError(String)
    /// The embedded JavaScript could not be loaded.
    case resourceLoadError(String)
    /// The configuration is invalid.
    case configError(String)

    public var description: String {
        switch self {
        case .notInitialized: return "SDK not initialized. Call initialize() first."
        case .bridgeError(let message): return "JS Bridge error: \(message)"
        case .resourceLoadError(let message): return "Resource load error: \(message)"
        case .configError(let message): return "Config error: \(message)"
        }
    }
}
