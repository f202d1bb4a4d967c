import OptimizationJSON
import Synchronization

/// The shared core's delivery outcome of each HTTP status ("success", "retry", "drop",
/// "disable"), as `__service.configure` states it (core/api-response.js `classifyStatus`), for
/// the service's traces and metrics. Empty until the first engine is configured: until then
/// every status reads as ``fallback``. Thread-safe.
package final class DeliveryStatusKinds: Sendable {
    private struct Table {
        var fallback = "retry"
        var statuses: [Int: String] = [:]
    }

    private let table = Mutex(Table())

    /// Every status retries until ``adopt(_:)`` reads the core's table.
    package init() {}

    /// Adopts the `statusKinds` answer of `__service.configure`: `{fallback, statuses: {"<status>": kind}}`.
    /// - Returns: false when `answer` does not have that shape (the table is left as it was).
    @discardableResult
    package func adopt(_ answer: JSONValue?) -> Bool {
        guard let fallback = answer?["fallback"]?.stringValue, let statuses = answer?["statuses"]?.objectValue else { return false }
        var parsed: [Int: String] = [:]
        for (status, kind) in statuses {
            guard let code = Int(status), let kind = kind.stringValue else { return false }
            parsed[code] = kind
        }
        table.withLock { $0 = Table(fallback: fallback, statuses: parsed) }
        return true
    }

    /// The kind used for statuses the core did not list.
    package var fallback: String { table.withLock { $0.fallback } }

    /// The delivery outcome of `status`.
    package func kind(of status: Int) -> String {
        table.withLock { $0.statuses[status] ?? $0.fallback }
    }
}
