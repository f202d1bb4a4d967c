/// What a ``SharedOutboxStore`` answers to ``SharedOutboxStore/erasures(after:)``: the profiles
/// erased by any replica since a replica's previous read of the store's erasure log, and where
/// that replica reads next.
///
/// A replica drops the claimed events of these profiles that it still holds in memory, so an
/// erasure made on one replica reaches the events another replica claimed before it.
public struct SharedOutboxErasures: Sendable, Equatable {
    /// The profiles erased after the cursor given, oldest erasure first (a profile erased twice
    /// may be listed twice).
    public var profileIds: [String]
    /// Where the next read starts: pass it to the next ``SharedOutboxStore/erasures(after:)``.
    /// Opaque; only the store that returned it interprets it.
    public var cursor: UInt64
    /// False when the store pruned log entries the given cursor had not read yet (the replica
    /// did not read the log for longer than the store keeps it): erasures may be missing from
    /// ``profileIds``, and the replica must find out another way which of the events it holds
    /// were erased (``SharedOutboxStore/storedSequences(among:)``).
    public var isComplete: Bool

    /// An answer; each parameter sets the property of the same name.
    public init(profileIds: [String], cursor: UInt64, isComplete: Bool) {
        self.profileIds = profileIds
        self.cursor = cursor
        self.isComplete = isComplete
    }
}
