import OrderedCollections
import Synchronization
import HostPlatform

/// The replays this process committed, so each replay ticket commits at most once: a bounded
/// in-memory set of ticket ids, each kept for ``retention`` (at least a ticket's lifetime, so a
/// ticket cannot outlive its record) on the app's clock.
///
/// Thread-safe: share one between requests (``OptimizationReplayTickets`` holds it).
///
/// Per process: with several replicas a ticket could be committed once per replica unless the
/// record is shared (a database table with a unique key, for example).
public final class ReplayLedger: Sendable {
    /// What ``claim(_:)`` found.
    public enum Claim: Sendable, Equatable {
        /// First use: the caller commits the replay.
        case claimed
        /// The ticket was already used.
        case alreadyCommitted
        /// ``capacity`` unexpired records are held: nothing is claimed until one expires.
        case full
    }

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
        let (seconds, attoseconds) = retention.components
        retentionMilliseconds = max(1, Double(seconds) * 1000 + Double(attoseconds) / 1e15)
        self.retention = retention
        self.capacity = max(1, capacity)
        self.clock = clock
    }

    /// Records `id` as committed unless it already is (or the ledger is full of unexpired ids).
    public func claim(_ id: String) -> Claim {
        let now = clock.now()
        return records.withLock { records in
            while let first = records.elements.first, first.value <= now { records.removeFirst() }
            if records[id] != nil { return .alreadyCommitted }
            guard records.count < capacity else { return .full }
            records[id] = now + retentionMilliseconds
            return .claimed
        }
    }

    /// Ids currently kept.
    public var count: Int {
        records.withLock { $0.count }
    }
}
