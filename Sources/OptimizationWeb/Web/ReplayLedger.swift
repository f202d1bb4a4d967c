/// Where the ids of committed replay tickets are recorded, so that each ticket commits at most
/// once (``OptimizationReplayTickets``).
///
/// Two kinds:
/// - a record of this process alone (``InMemoryReplayLedger``): ``isSharedAcrossProcesses`` is
///   false, and ``OptimizationReplayTickets`` then binds each ticket it issues to this process,
///   so another replica or this process after a restart refuses it (instead of committing it
///   again);
/// - a record every replica shares (a database table with a unique key, such as
///   `PostgresReplayLedger` of the PostgreSQL integration): ``isSharedAcrossProcesses`` is true
///   and a ticket issued by one replica commits once on whichever replica it reaches.
///
/// **Threading.** Implementations are thread-safe; ``claim(_:)`` may be called from any task and
/// holds no lock across a suspension.
public protocol ReplayLedger: Sendable {
    /// True when every process that issues and commits the same tickets sees this record.
    var isSharedAcrossProcesses: Bool { get }

    /// Records `id` as committed unless it already is.
    /// - Returns: ``ReplayClaim/claimed`` for the first claim of an unexpired id.
    /// - Throws: when the record cannot be reached (the ticket is then not committed; the caller
    ///   may present it again).
    func claim(_ id: String) async throws -> ReplayClaim
}

/// What ``ReplayLedger/claim(_:)`` found.
public enum ReplayClaim: Sendable, Equatable {
    /// First use: the caller commits the replay.
    case claimed
    /// The ticket was already used.
    case alreadyCommitted
    /// The record holds as many unexpired ids as it may: nothing is claimed until one expires.
    case full
}
