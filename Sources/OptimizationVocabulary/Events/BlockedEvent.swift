import OptimizationJSON

/// A call that consent did not allow. Reported once per blocked call on
/// `OptimizationClient`'s blocked-event stream.
public struct BlockedEvent: Sendable, Equatable {
    /// Always `"consent"` today.
    public let reason: String
    /// The core method name: `identify`, `page`, `screen`, `track`, `trackView`, `trackClick`,
    /// `trackFlagView`, `trackCurrentScreen`.
    public let method: String
    /// The call's original payload(s).
    public let args: [JSONValue]

    /// Creates a report of a blocked call.
    /// - Parameters:
    ///   - reason: why it was blocked (`"consent"`).
    ///   - method: the core method name, for example `track` or `trackView`.
    ///   - args: the call's original payload(s).
    public init(reason: String, method: String, args: [JSONValue]) {
        self.reason = reason
        self.method = method
        self.args = args
    }
}
