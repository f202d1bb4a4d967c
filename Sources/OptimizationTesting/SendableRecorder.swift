import Synchronization

/// Values recorded from any task, in order: for a callback a test checks afterwards
/// (a webhook's invalidations, for example). Thread-safe.
public final class SendableRecorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    /// An empty recorder.
    public init() {}

    /// Records `value`.
    public func append(_ value: Value) {
        values.withLock { $0.append(value) }
    }

    /// Every value recorded so far, in order.
    public var all: [Value] {
        values.withLock { $0 }
    }
}
