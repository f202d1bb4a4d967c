import Foundation
import HostPlatform
import Logging
import Synchronization

extension DurableOutbox {
    // MARK: Privacy

    /// Removes every event (consent withdrawn): deletes every segment and `.acks` file and syncs
    /// the directory before returning. Later appends start a new segment.
    /// - Throws: ``OutboxError/ioFailure(path:operation:errno:)`` if a file could not be removed
    ///   (what was removed stays removed; call again), ``OutboxError/closed``.
    public func purge() throws(OutboxError) {
        try state.withLock { (guarded) throws(OutboxError) in
            guard !guarded.closed else { throw .closed }
            guarded.expiryTimer?.cancel()
            guarded.expiryTimer = nil
            guarded.expiryDue = nil
            try guarded.storage.purge()
        }
        logger.info("outbox purged", metadata: ["directory": "\(directory.path)"])
    }

    /// Removes every event of `profileId`, delivered or not, from the disk: each segment holding
    /// one is rewritten (atomically) without it, keeping the other undelivered events.
    /// - Returns: how many undelivered events were erased.
    /// - Throws: ``OutboxError/ioFailure(path:operation:errno:)`` when a segment could not be
    ///   rewritten (segments already rewritten stay erased), ``OutboxError/closed``.
    @discardableResult
    public func eraseProfile(_ profileId: String) throws(OutboxError) -> Int {
        let erased = try state.withLock { (guarded) throws(OutboxError) -> Int in
            guard !guarded.closed else { throw .closed }
            return try guarded.storage.eraseProfile(profileId)
        }
        logger.debug("outbox erased a profile's events", metadata: ["count": "\(erased)"])
        return erased
    }
}
