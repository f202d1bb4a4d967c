import HostPlatform
import Optimization
import Synchronization

/// An outbox table shared by the replicas of a test, in memory: ``store(replica:)`` gives each
/// replica its view (a `SharedOutboxStore`), with the contract of a production store (claims in
/// sequence order, a profile's later event not claimable while an earlier one is leased to
/// another replica's live claim, leases on an injected clock, takeover when they expire; an
/// erasure log kept for ``erasureRetention``, pruned by erasures; dead letters kept aside in
/// ``deadLetters``). ``isAvailable`` set to false
/// makes every call throw ``Unavailable`` (the database went away).
///
/// **Threading.** Thread-safe; every call completes without suspending.
public final class InMemorySharedOutbox: Sendable {
    /// The error of every call while ``isAvailable`` is false.
    public struct Unavailable: Error, CustomStringConvertible {
        /// A sentence for logs.
        public var description: String { "the shared outbox store is unavailable" }
    }

    /// A stored event and its lease.
    public struct Row: Sendable {
        /// The stored event.
        public var record: OutboxRecord
        /// The replica holding it, while leased.
        public var owner: String?
        /// When the lease ends, in the clock's milliseconds.
        public var leaseExpiresAt: Double?
        /// How many times it was claimed (more than once after a takeover or a release).
        public var claims: Int
    }

    /// An entry of the erasure log.
    public struct Erasure: Sendable, Equatable {
        /// Position in the log (increasing from 1).
        public var id: UInt64
        /// The erased profile.
        public var profileId: String
        /// When it was erased, in the clock's milliseconds.
        public var erasedAt: Double
    }

    fileprivate struct Table {
        var rows: [Row] = []
        var deadLetters: [Row] = []
        var nextSequence: UInt64 = 1
        var erasures: [Erasure] = []
        var nextErasure: UInt64 = 1
        /// The newest log id pruned (0: none).
        var prunedThrough: UInt64 = 0
        var available = true
        var appendCalls = 0
        var appendedMessageIds: [String] = []
    }

    private let table = Mutex(Table())
    private let clock: any HostClock
    private let leaseDuration: Duration
    /// How long an entry stays in the erasure log: an erasure prunes the entries older than this.
    public let erasureRetention: Duration

    /// - Parameters:
    ///   - clock: the clock leases and the erasure log's ages run on (a `ManualClock` in tests).
    ///   - leaseDuration: how long a claim is leased.
    ///   - erasureRetention: how long an erasure stays in the erasure log.
    public init(clock: any HostClock, leaseDuration: Duration = .seconds(30), erasureRetention: Duration = .seconds(3600)) {
        self.clock = clock
        self.leaseDuration = leaseDuration
        self.erasureRetention = erasureRetention
    }

    /// The erasure log, oldest first (what pruning left).
    public var erasureLog: [Erasure] {
        table.withLock { $0.erasures }
    }

    /// Whether calls succeed; false simulates a store that is away.
    public var isAvailable: Bool {
        get { table.withLock { $0.available } }
        set { table.withLock { $0.available = newValue } }
    }

    /// The stored events, in sequence order.
    public var rows: [Row] {
        table.withLock { $0.rows }
    }

    /// The events moved aside by `SharedOutboxStore.deadLetter(_:)`, in the order they were
    /// moved (never claimed again).
    public var deadLetters: [Row] {
        table.withLock { $0.deadLetters }
    }

    /// Replaces the stored payload of the event with this `messageId` (a row damaged in the
    /// store, for tests of what the service does with it).
    /// - Returns: whether such an event is stored.
    @discardableResult
    public func corruptPayload(ofMessage messageId: String, with payload: [UInt8]) -> Bool {
        table.withLock { table in
            guard let index = table.rows.firstIndex(where: { $0.record.messageId == messageId }) else { return false }
            let record = table.rows[index].record
            table.rows[index].record = OutboxRecord(
                sequence: record.sequence, queue: record.queue, messageId: record.messageId, profileId: record.profileId,
                consent: record.consent, acceptedAt: record.acceptedAt, payload: payload)
            return true
        }
    }

    /// How many `SharedOutboxStore.append(_:)` calls succeeded.
    public var appendCalls: Int {
        table.withLock { $0.appendCalls }
    }

    /// The `messageId` of every event ever stored, in append order.
    public var appendedMessageIds: [String] {
        table.withLock { $0.appendedMessageIds }
    }

    /// The view of replica `replica`.
    public func store(replica: String) -> some SharedOutboxStore {
        ReplicaView(outbox: self, replica: replica)
    }

    fileprivate func run<Result>(_ body: (inout Table, _ now: Double) throws -> Result) throws -> Result {
        let now = clock.now()
        return try table.withLock { table in
            guard table.available else { throw Unavailable() }
            return try body(&table, now)
        }
    }

    fileprivate var leaseMilliseconds: Double {
        Self.milliseconds(leaseDuration)
    }

    fileprivate static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
    }

    private struct ReplicaView: SharedOutboxStore {
        let outbox: InMemorySharedOutbox
        let replica: String

        func append(_ events: [OutboxEvent]) async throws -> [OutboxRecord] {
            try outbox.run { table, now in
                let records = events.map { event -> OutboxRecord in
                    defer { table.nextSequence += 1 }
                    return OutboxRecord(
                        sequence: table.nextSequence, queue: event.queue, messageId: event.messageId, profileId: event.profileId,
                        consent: event.consent, acceptedAt: event.acceptedAt ?? now, payload: event.payload)
                }
                table.rows.append(contentsOf: records.map { Row(record: $0, owner: nil, leaseExpiresAt: nil, claims: 0) })
                table.appendCalls += 1
                table.appendedMessageIds.append(contentsOf: events.map(\.messageId))
                return records
            }
        }

        func claim(queue: EventQueueKind, limit: Int) async throws -> [OutboxRecord] {
            let lease = outbox.leaseMilliseconds
            return try outbox.run { table, now in
                func live(_ row: Row) -> Bool { row.leaseExpiresAt.map { $0 >= now } ?? false }
                var claimed: [OutboxRecord] = []
                var leasedProfiles = Set<String>()
                for index in table.rows.indices where table.rows[index].record.queue == queue {
                    let row = table.rows[index]
                    let profile = row.record.profileId
                    if live(row) {
                        // Another replica holds an earlier event of this profile: its later ones wait.
                        if let profile, row.owner != replica { leasedProfiles.insert(profile) }
                        continue
                    }
                    if let profile, leasedProfiles.contains(profile) { continue }
                    guard claimed.count < max(1, limit) else { break }
                    table.rows[index].owner = replica
                    table.rows[index].leaseExpiresAt = now + lease
                    table.rows[index].claims += 1
                    claimed.append(row.record)
                }
                return claimed
            }
        }

        func acknowledge(_ sequences: [UInt64]) async throws -> Int {
            let gone = Set(sequences)
            return try outbox.run { table, _ in
                let before = table.rows.count
                table.rows.removeAll { gone.contains($0.record.sequence) }
                return before - table.rows.count
            }
        }

        func release(_ sequences: [UInt64]) async throws {
            let given = Set(sequences)
            try outbox.run { table, _ in
                for index in table.rows.indices where given.contains(table.rows[index].record.sequence) && table.rows[index].owner == replica {
                    table.rows[index].owner = nil
                    table.rows[index].leaseExpiresAt = nil
                }
            }
        }

        func deadLetter(_ sequences: [UInt64]) async throws -> Int {
            let moved = Set(sequences)
            return try outbox.run { table, _ in
                let before = table.rows.count
                table.deadLetters.append(contentsOf: table.rows.filter { moved.contains($0.record.sequence) })
                table.rows.removeAll { moved.contains($0.record.sequence) }
                return before - table.rows.count
            }
        }

        func renewLeases() async throws {
            let lease = outbox.leaseMilliseconds
            try outbox.run { table, now in
                for index in table.rows.indices where table.rows[index].owner == replica && (table.rows[index].leaseExpiresAt ?? 0) >= now {
                    table.rows[index].leaseExpiresAt = now + lease
                }
            }
        }

        func eraseProfile(_ profileId: String) async throws -> Int {
            let retention = InMemorySharedOutbox.milliseconds(outbox.erasureRetention)
            return try outbox.run { table, now in
                let before = table.rows.count
                table.rows.removeAll { $0.record.profileId == profileId }
                table.deadLetters.removeAll { $0.record.profileId == profileId }
                table.erasures.append(Erasure(id: table.nextErasure, profileId: profileId, erasedAt: now))
                table.nextErasure += 1
                let expired = table.erasures.prefix { $0.erasedAt < now - retention }
                if let newest = expired.last { table.prunedThrough = max(table.prunedThrough, newest.id) }
                table.erasures.removeFirst(expired.count)
                return before - table.rows.count
            }
        }

        func erasures(after cursor: UInt64?) async throws -> SharedOutboxErasures {
            try outbox.run { table, _ in
                let end = max(table.prunedThrough, table.erasures.last?.id ?? 0)
                guard let cursor else { return SharedOutboxErasures(profileIds: [], cursor: end, isComplete: true) }
                return SharedOutboxErasures(
                    profileIds: table.erasures.filter { $0.id > cursor }.map(\.profileId), cursor: max(cursor, end),
                    isComplete: cursor >= table.prunedThrough)
            }
        }

        func storedSequences(among sequences: [UInt64]) async throws -> [UInt64] {
            let asked = Set(sequences)
            return try outbox.run { table, _ in
                table.rows.map(\.record.sequence).filter { asked.contains($0) }
            }
        }
    }
}
