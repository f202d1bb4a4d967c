import OptimizationJSON
import Synchronization

/// Process-unique integer handles for prepared documents. The engine keys its caches by handle
/// on the hot path (a number crosses into JavaScript without allocating), and by content key to
/// adopt equal content under a new handle without transferring it again.
package enum DocumentHandle {
    private static let counter = Atomic<Int>(0)

    package static func next() -> Int {
        counter.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
