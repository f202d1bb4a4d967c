import OptimizationJSON
import OptimizationTransport
import OrderedCollections

/// The entry ids a ``ContentfulDeliverySource`` was recently told the space does not have (a
/// negative cache), per locale, in bounded memory, with times on the source's clock (ms).
///
/// **Contract.** ``record(_:now:)`` remembers a query's id; ``contains(_:now:)`` answers true
/// for it until ``timeToLive`` after it was recorded (recording it again restarts that time).
/// ``remove(entryId:)`` forgets an id in every locale (an invalidation: the entry may have been
/// published since); ``removeAll()`` forgets everything. A zero ``timeToLive`` or ``capacity``
/// remembers nothing.
///
/// **Bound.** At most ``capacity`` ids. Keys are kept in the order first recorded, so the oldest
/// are at the front; when the record is full, the expired ones at the front, or at least the
/// oldest eighth of ``capacity``, are dropped in one bulk removal. Each record costs O(1)
/// amortized however many unknown ids an attacker asks: a flood only shortens how long the
/// oldest ids are remembered (they are then asked again, as without a negative cache).
struct ContentfulMissingEntries {
    /// How long a recorded id is answered as missing, in ms.
    let timeToLive: Double
    /// Most ids remembered.
    let capacity: Int
    /// When each key was last recorded (clock ms), oldest first.
    private var recordedAt: OrderedDictionary<ContentfulEntryQuery, Double> = [:]

    /// An empty record remembering at most `capacity` ids for `timeToLive` each.
    init(timeToLive: Duration, capacity: Int) {
        self.timeToLive = max(0, timeToLive.inMilliseconds)
        self.capacity = max(0, capacity)
    }

    /// True when `query`'s id was recorded as missing less than ``timeToLive`` before `now`.
    func contains(_ query: ContentfulEntryQuery, now: Double) -> Bool {
        guard let at = recordedAt[query] else { return false }
        return now - at < timeToLive
    }

    /// Remembers `query` (an `.id` selection) as missing at `now`.
    mutating func record(_ query: ContentfulEntryQuery, now: Double) {
        guard timeToLive > 0, capacity > 0 else { return }
        if recordedAt[query] != nil {
            // Updated in place (O(1)); the front may now hold an unexpired key, which only delays
            // the bulk removal of the expired keys behind it (the capacity still bounds them).
            recordedAt[query] = now
            return
        }
        if recordedAt.count >= capacity {
            let expired = recordedAt.values.prefix(while: { now - $0 >= timeToLive }).count
            recordedAt.removeFirst(min(recordedAt.count, max(expired, max(1, capacity / 8))))
        }
        recordedAt[query] = now
    }

    /// Forgets `entryId` in every locale.
    mutating func remove(entryId: String) {
        recordedAt.removeAll { key, _ in key.selection == .id(entryId) }
    }

    /// Forgets `query` (one id, one locale), when recorded.
    mutating func remove(_ query: ContentfulEntryQuery) {
        guard recordedAt[query] != nil else { return }
        recordedAt.removeValue(forKey: query)
    }

    /// Forgets everything.
    mutating func removeAll() {
        recordedAt.removeAll()
    }

    /// Number of ids held (expired ones not yet dropped included).
    var count: Int { recordedAt.count }
}
