/// The storage of an event outbox shared by the replicas of a service: the seam through which
/// `OptimizationService` (its `Options.sharedOutbox`) stores accepted Insights events outside the
/// process, so that another replica delivers them when this one is gone for good. The
/// OptimizationPostgres package implements it on a PostgreSQL table.
///
/// **Contract** (what the service relies on):
/// - ``append(_:)`` returns once the events are stored for every replica to see (committed);
///   when it throws nothing was stored.
/// - ``claim(queue:limit:)`` leases stored events that no live replica holds to this replica.
///   Events of one profile are handed out in append order, and a profile's later event is not
///   handed out while an earlier one is leased to another replica's live claim (so one replica
///   at a time delivers a profile's events; this replica may claim more of a profile it holds). A lease lasts a store-defined
///   time unless ``renewLeases()`` extends it; an expired lease makes its events claimable by
///   any replica (a takeover), so delivery is at least once.
/// - ``acknowledge(_:)`` deletes delivered events; ``release(_:)`` makes leased events
///   claimable again at once (the replica gives them back, for example when it stops).
/// - ``deadLetter(_:)`` moves events that can never be delivered (their stored payload is not
///   an event the service can queue) out of the queue into the store's **dead letters**, where
///   they stay for an operator and are never claimed again.
/// - ``eraseProfile(_:)`` deletes every stored event of a profile, leased or not, and records
///   the erasure in the store's **erasure log**, in the same commit. ``erasures(after:)`` reads
///   that log from a cursor: every replica reads it on each poll and drops the erased profiles'
///   events it claimed before the erasure and still holds in memory. The log is durable (unlike a
///   notification, a replica that was away reads what it missed), serialized with erasures (a
///   read never skips an erasure that commits after it), and pruned after a store-defined,
///   documented age; a reader whose cursor fell behind the pruning is told so
///   (``SharedOutboxErasures/isComplete`` false) and checks its held events with
///   ``storedSequences(among:)`` instead.
///
/// **Errors.** Every method throws when the store is unreachable or refuses. Implementations
/// bound every call in time (a caller must never wait indefinitely for a store that is away).
///
/// **Threading.** Implementations are `Sendable` and accept concurrent calls.
public protocol SharedOutboxStore: Sendable {
    /// Stores `events` (one commit for all of them).
    /// - Returns: the stored records, with their sequence numbers, in the order given.
    func append(_ events: [OutboxEvent]) async throws -> [OutboxRecord]

    /// Leases at most `limit` of the oldest claimable events of `queue` to this replica.
    /// - Returns: the leased records in sequence order (empty when none is claimable).
    func claim(queue: EventQueueKind, limit: Int) async throws -> [OutboxRecord]

    /// Deletes the events with these sequence numbers (delivered, or dropped for good).
    /// - Returns: how many were deleted.
    @discardableResult
    func acknowledge(_ sequences: [UInt64]) async throws -> Int

    /// Gives the leases of these events back: another claim may take them at once.
    func release(_ sequences: [UInt64]) async throws

    /// Moves the events with these sequence numbers (leased or not) out of the queue into the
    /// dead letters, in one commit: no claim returns them again, and ``eraseProfile(_:)`` still
    /// deletes them.
    /// - Returns: how many were moved (fewer when some were already acknowledged, erased or
    ///   moved).
    @discardableResult
    func deadLetter(_ sequences: [UInt64]) async throws -> Int

    /// Extends the lease of every event this replica holds.
    func renewLeases() async throws

    /// Deletes every stored event of `profileId` and records the erasure in the erasure log, in
    /// one commit.
    /// - Returns: how many were deleted.
    @discardableResult
    func eraseProfile(_ profileId: String) async throws -> Int

    /// The profiles erased after `cursor` (by any replica), read from the erasure log.
    /// - Parameter cursor: the ``SharedOutboxErasures/cursor`` of the previous read; nil for a
    ///   replica's first read, which returns no profiles and the log's current end (a replica
    ///   that has claimed nothing yet has nothing to drop).
    /// - Returns: the erased profiles in log order, the cursor of the next read, and whether the
    ///   log still held every entry after `cursor`.
    func erasures(after cursor: UInt64?) async throws -> SharedOutboxErasures

    /// Which of these events are still stored (neither acknowledged, erased nor dropped by a
    /// bound): the fallback of a replica whose erasure-log cursor fell behind the pruning.
    /// - Returns: the sequence numbers among `sequences` that are stored, in any order.
    func storedSequences(among sequences: [UInt64]) async throws -> [UInt64]
}
