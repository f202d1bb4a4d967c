import OrderedCollections
import Synchronization

/// A thread-safe map that keeps at most `capacity` values; inserting beyond it evicts the value
/// inserted first. Reads and writes take one lock for a dictionary lookup.
final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    let capacity: Int
    private let storage = Mutex(OrderedDictionary<Key, Value>())

    init(capacity: Int) {
        precondition(capacity > 0, "a cache holds at least one value")
        self.capacity = capacity
    }

    func value(for key: Key) -> Value? {
        storage.withLock { $0[key] }
    }

    func insert(_ value: Value, for key: Key) {
        storage.withLock { values in
            if values.updateValue(value, forKey: key) == nil, values.count > capacity {
                values.removeFirst()
            }
        }
    }

    var count: Int {
        storage.withLock { $0.count }
    }
}
