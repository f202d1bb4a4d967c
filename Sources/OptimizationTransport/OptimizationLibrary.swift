/// This library's identity: stamped on every event as `context.library` and sent as the HTTP
/// `User-Agent` (`name/version`).
public enum OptimizationLibrary {
    /// The package's name.
    public static let name = "swift-optimization-linux"
    /// The package's version.
    public static let version = "0.1.0"
}
