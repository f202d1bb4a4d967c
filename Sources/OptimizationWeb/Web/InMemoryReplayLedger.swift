import OrderedCollections
import Synchronization
import HostPlatform

/// The ``ReplayLedger`` of one process: a bounded in-memory set of ticket ids, each kept for
/// ``retention`` (at least a ticket's lifetime, so a ticket cannot outlive its record) on the
/// app's clock.
///
/// Not shared (``isSharedAcrossProcesses`` is false): ``OptimizationReplayTickets`` binds the
/// tickets it issues with this ledger to the process, so a ticket cannot be committed once per
/// replica or once more after a restart. A deployment with several replicas serving the same
/// visitors needs a shared ledger (a database).
///
/// **Cost.** Records are kept in claim order, which is expiry order (one retention for all), so
/// the expired ones are removed from the front in one step per claim: a claim after a long quiet
/// time costs one removal of the expired prefix, not one removal per record.
///
/// **Threading.** Thread-safe; the lock is held for one claim's lookup and insertion.
public final class InMemoryReplayLedger: ReplayLedger {
    /// How long each id is kept.
    public let retention: Duration
    /// The most ids kept at once.
    public let capacity: Int
    private let clock: any HostClock
    private let retentionMilliseconds: Double
    /// Id → when its record expires (ms since the Unix epoch), in claim order (so expiry order).
    private let records = Mutex<OrderedDictionary<String, Double>>([:])

    /// - Parameters:
    ///   - retention: how long an id is kept; at least 1 ms.
    ///   - capacity: the most ids kept at once; at least 1.
    ///   - clock: the time of expiry.
    public init(retention: Duration, capacity: Int, clock: any HostClock) {
        retentionMilliseconds = max(1, retention.inMilliseconds)
        self.retention = retention
        self.capacity = max(1, capacity)
        self.clock = clock
    }

    /// False: the record is this process's alone.
    public var isSharedAcrossProcesses: Bool { false }

    /// Records `id` as committed unless it already is (or the ledger is full of unexpired ids).
    public func claim(_ id: String) -> ReplayClaim {
        let now = clock.now()
        return records.withLock { records in
            let expired = records.expiredPrefixCount { $0 <= now }
            if expired > 0 { records.removeFirst(expired) }
            if records[id] != nil { return .alreadyCommitted }
            guard records.count < capacity else { return .full }
            records[id] = now + retentionMilliseconds
            return .claimed
        }
    }

    /// Ids currently kept (expired ones included until the next claim removes them).
    public var count: Int {
        records.withLock { $0.count }
    }
}
