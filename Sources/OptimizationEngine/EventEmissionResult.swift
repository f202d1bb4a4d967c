import OptimizationJSON

/// What happened to an event call: accepted into a delivery path, or not (blocked by consent,
/// or de-duplicated).
public struct EventEmissionResult: Sendable, Equatable {
    /// False when consent (or de-duplication) kept the event from being emitted.
    public let accepted: Bool
    /// For Experience events whose request succeeded before the call returned: the raw
    /// optimization data of the response (`profile`, `selectedOptimizations`, `changes`; preview
    /// overrides are not applied here, they are in the client's state). Nil when the event stays
    /// queued: offline, during a retry backoff or an open circuit, or after a failed request (it
    /// is retried; see the *Delivery guarantees* article of the `Optimization` documentation).
    public let data: JSONValue?

    /// Creates a result.
    /// - Parameters:
    ///   - accepted: false when consent (or de-duplication) kept the event from being emitted.
    ///   - data: the raw optimization data of an Experience response received before the call
    ///     returned; nil (the default) otherwise, for example while the event stays queued.
    public init(accepted: Bool, data: JSONValue? = nil) {
        self.accepted = accepted
        self.data = data
    }
}

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
