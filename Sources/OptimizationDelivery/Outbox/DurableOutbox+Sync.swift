import Foundation
import HostPlatform
import Logging
import Synchronization

extension DurableOutbox {
    // MARK: Lifecycle

    /// Makes everything written so far durable now: `fsync`s the current segment, sealed segments
    /// with unsynced writes and, when names changed, the directory (a graceful shutdown under
    /// ``OutboxDurability/writeOnly``, or before the interval of
    /// ``OutboxDurability/syncInterval(milliseconds:)`` elapses).
    /// - Throws: ``OutboxError/ioFailure(path:operation:errno:)`` (what failed stays unsynced and
    ///   is retried by the next sync), ``OutboxError/closed``.
    public func sync() throws(OutboxError) {
        try state.withLock { (guarded) throws(OutboxError) in
            guard !guarded.closed else { throw .closed }
            try guarded.storage.syncAll()
        }
    }

    /// Syncs unsynced writes (unless ``OutboxDurability/writeOnly``), closes every file, releases
    /// the directory's lock and finishes ``drops``. Afterwards appends, purge and erasure throw
    /// ``OutboxError/closed`` and the rest return nothing. Idempotent.
    public func close() {
        let wasOpen = state.withLock { guarded -> Bool in
            guard !guarded.closed else { return false }
            guarded.closed = true
            guarded.syncTimer?.cancel()
            guarded.expiryTimer?.cancel()
            guarded.syncTimer = nil
            guarded.expiryTimer = nil
            guarded.storage.closeFiles()
            return true
        }
        if wasOpen { dropContinuation.finish() }
    }

    /// Under ``OutboxDurability/syncInterval(milliseconds:)``, keeps one sync tick scheduled
    /// while anything written or renamed is not durable.
    func scheduleSync(_ guarded: inout Guarded) {
        guard case .syncInterval(let milliseconds) = configuration.durability, !guarded.closed, guarded.syncTimer == nil,
              guarded.storage.needsSync
        else { return }
        guarded.syncTimer = clock.schedule(after: .milliseconds(max(0, milliseconds))) { [weak self] in self?.syncTick() }
    }

    /// What one sync tick `fsync`s outside the lock: a duplicate handle of the active segment and
    /// the writes it covers, the sealed segments with unsynced writes (taken out of the storage
    /// until done), and the directory changes to cover.
    private struct SyncWork: Sendable {
        var active: (descriptor: Int32, path: String, writes: UInt64)?
        var sealed: [(id: UInt64, descriptor: Int32, path: String)] = []
        var directoryChanges: UInt64?
    }

    /// The periodic `fsync` of ``OutboxDurability/syncInterval(milliseconds:)``, outside the lock
    /// so appends do not wait for the disk. Writes stay marked unsynced until their `fsync`
    /// succeeded: a failed one is logged and retried by the next tick (scheduled at once).
    private func syncTick() {
        let work = state.withLock { guarded -> SyncWork? in
            guarded.syncTimer = nil
            guard !guarded.closed else { return nil }
            var work = SyncWork()
            let storage = guarded.storage
            if storage.dirty, let active = storage.active, let path = storage.activePath,
               let duplicate = fileSystem.duplicate(active.descriptor) {
                work.active = (duplicate, path, storage.writeCount)
            }
            work.sealed = storage.unsyncedSealed.map { ($0.id, $0.descriptor, storage.file(OutboxIndex.segmentName($0.id))) }
            guarded.storage.unsyncedSealed = []
            if storage.directoryDirty { work.directoryChanges = storage.directoryChanges }
            return work
        }
        guard let work else { return }
        var failures: [OutboxError] = []
        var activeSynced = false
        if let active = work.active {
            do {
                try fileSystem.sync(active.descriptor, path: active.path)
                activeSynced = true
            } catch {
                failures.append(error)
            }
            fileSystem.close(active.descriptor)
        }
        var unsynced: [(id: UInt64, descriptor: Int32)] = []
        for sealed in work.sealed {
            do {
                try fileSystem.sync(sealed.descriptor, path: sealed.path)
                fileSystem.close(sealed.descriptor)
            } catch {
                failures.append(error)
                unsynced.append((sealed.id, sealed.descriptor))
            }
        }
        var directorySynced = false
        if work.directoryChanges != nil {
            do {
                try fileSystem.syncDirectory(directory.path)
                directorySynced = true
            } catch {
                failures.append(error)
            }
        }
        for failure in failures {
            logger.warning("outbox fsync failed; retrying at the next sync", metadata: ["error": "\(failure)"])
        }
        state.withLock { guarded in
            if activeSynced, let writes = work.active?.writes {
                guarded.storage.syncedWriteCount = max(guarded.storage.syncedWriteCount, writes)
            }
            if directorySynced, let changes = work.directoryChanges {
                guarded.storage.syncedDirectoryChanges = max(guarded.storage.syncedDirectoryChanges, changes)
            }
            for sealed in unsynced {
                // Deleted or rewritten meanwhile (or closed): nothing left to sync.
                if guarded.closed || guarded.storage.index.segments[sealed.id] == nil {
                    fileSystem.close(sealed.descriptor)
                } else {
                    guarded.storage.unsyncedSealed.append(sealed)
                }
            }
            scheduleSync(&guarded)
        }
    }
}
