import Logging

/// The files and in-memory index of one outbox directory: every file mutation of
/// ``DurableOutbox`` (append, acknowledge, drop, delete, rewrite, purge). Not thread-safe: the
/// owning ``DurableOutbox`` keeps it behind its lock. Timers and reporting are the owner's.
struct OutboxStorage: Sendable {
    let path: String
    let configuration: OutboxConfiguration
    let logger: Logger
    let fileSystem: any OutboxFileSystem
    /// A sealed segment is compacted only from this size on (bytes).
    var compactionMinimumBytes = 64 << 10
    var index = OutboxIndex()
    var nextSequence: UInt64 = 1
    var lockDescriptor: Int32 = -1
    var active: (id: UInt64, descriptor: Int32, bytes: Int)?
    /// Writes to active segments under ``OutboxDurability/syncInterval(milliseconds:)``, and how
    /// many of them an `fsync` covers (monotonic across segments, so a sync that finishes after
    /// its segment was sealed cannot mark a newer segment's writes synced).
    var writeCount: UInt64 = 0
    var syncedWriteCount: UInt64 = 0
    /// Sealed segments whose writes are not `fsync`ed yet (their open handles): the next sync
    /// tick syncs and closes them, off the appending thread.
    var unsyncedSealed: [(id: UInt64, descriptor: Int32)] = []
    /// Creations, renames and removals in the directory, and how many of them a directory
    /// `fsync` covers.
    var directoryChanges: UInt64 = 0
    var syncedDirectoryChanges: UInt64 = 0

    init(path: String, configuration: OutboxConfiguration, logger: Logger, fileSystem: any OutboxFileSystem) {
        self.path = path
        self.configuration = configuration
        self.logger = logger
        self.fileSystem = fileSystem
    }

    /// The active segment has writes no `fsync` covers.
    var dirty: Bool { writeCount != syncedWriteCount }
    var directoryDirty: Bool { directoryChanges != syncedDirectoryChanges }
    /// Something written or renamed is not durable yet.
    var needsSync: Bool { dirty || !unsyncedSealed.isEmpty || directoryDirty }

    func file(_ name: String) -> String {
        path + "/" + name
    }

    var activePath: String? {
        active.map { file(OutboxIndex.segmentName($0.id)) }
    }

    // MARK: Appending

    /// Writes `records` (consecutive sequences from ``nextSequence``) with one `write(2)` and
    /// indexes them. Under ``OutboxDurability/syncEveryAppend`` the segment is `fsync`ed, and the
    /// directory too when a name changed since its last `fsync` (a new segment), before it
    /// returns. On failure nothing is kept (the torn bytes are cut, a new segment follows).
    mutating func write(_ records: [(record: OutboxRecord, size: Int)]) throws(OutboxError) {
        let segment = try activeSegment()
        var bytes: [UInt8] = []
        for item in records { bytes += OutboxFraming.eventFrame(item.record) }
        let segmentPath = file(OutboxIndex.segmentName(segment.id))
        do {
            try fileSystem.write(bytes, to: segment.descriptor, path: segmentPath)
            if configuration.durability == .syncEveryAppend {
                try fileSystem.sync(segment.descriptor, path: segmentPath)
                if directoryDirty { try syncDirectory() }
            }
        } catch {
            _ = fileSystem.truncate(segment.descriptor, to: segment.bytes)
            sealActive()
            throw error
        }
        active?.bytes += bytes.count
        index.setFileBytes(segment.bytes + bytes.count, of: segment.id)
        for item in records { index.insert(item.record, segment: segment.id, size: item.size) }
        nextSequence += UInt64(records.count)
        if case .syncInterval = configuration.durability { writeCount += 1 }
    }

    /// The segment appends go to, starting a new one when there is none or it is full. The
    /// segment is created before its `.acks` file, so a crash in between leaves an empty segment
    /// (removed silently at the next open), never an orphan `.acks` file that would look like a
    /// lost segment. The new names are made durable with the next directory `fsync` (before the
    /// append returns under ``OutboxDurability/syncEveryAppend``, at the next sync tick under
    /// ``OutboxDurability/syncInterval(milliseconds:)``).
    private mutating func activeSegment() throws(OutboxError) -> (id: UInt64, descriptor: Int32, bytes: Int) {
        if let active, active.bytes < configuration.segmentBytes { return active }
        sealActive()
        let id = nextSequence
        let segmentPath = file(OutboxIndex.segmentName(id))
        let descriptor = try fileSystem.createForAppend(segmentPath, header: OutboxFraming.segmentMagic)
        directoryChanges += 1
        do {
            let acknowledgements = try fileSystem.createForAppend(
                file(OutboxIndex.acknowledgementName(id)), header: OutboxFraming.acknowledgementMagic)
            fileSystem.close(acknowledgements)
            directoryChanges += 1
        } catch {
            fileSystem.close(descriptor)
            try? fileSystem.remove(segmentPath)
            throw error
        }
        index.addSegment(id, fileBytes: OutboxFraming.headerBytes)
        active = (id, descriptor, OutboxFraming.headerBytes)
        return active!
    }

    /// `fsync`s the directory, recording which changes that covered.
    mutating func syncDirectory() throws(OutboxError) {
        let changes = directoryChanges
        try fileSystem.syncDirectory(path)
        syncedDirectoryChanges = max(syncedDirectoryChanges, changes)
    }

    /// `fsync`s the active segment, every sealed segment with unsynced writes and, when a name
    /// changed, the directory. A segment whose `fsync` fails stays unsynced (retried next time).
    /// - Throws: the first failure, after trying everything.
    mutating func syncAll() throws(OutboxError) {
        var failure: OutboxError?
        if let active, let activePath {
            let written = writeCount
            do {
                try fileSystem.sync(active.descriptor, path: activePath)
                syncedWriteCount = max(syncedWriteCount, written)
            } catch {
                failure = failure ?? error
            }
        }
        var remaining: [(id: UInt64, descriptor: Int32)] = []
        for sealed in unsyncedSealed {
            do {
                try fileSystem.sync(sealed.descriptor, path: file(OutboxIndex.segmentName(sealed.id)))
                fileSystem.close(sealed.descriptor)
            } catch {
                failure = failure ?? error
                remaining.append(sealed)
            }
        }
        unsyncedSealed = remaining
        if directoryDirty {
            do { try syncDirectory() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    /// Closes the active segment; deletes it when all its events are done. Unsynced writes
    /// (``OutboxDurability/syncInterval(milliseconds:)``) keep its handle open in
    /// ``unsyncedSealed`` for the next sync tick, so sealing never waits for the disk.
    mutating func sealActive() {
        guard let segment = active else { return }
        active = nil
        if dirty {
            unsyncedSealed.append((segment.id, segment.descriptor))
            syncedWriteCount = writeCount
        } else {
            fileSystem.close(segment.descriptor)
        }
        if index.segments[segment.id]?.live == 0 { try? deleteSegment(segment.id) }
    }

    /// Stops tracking a sealed segment's unsynced writes (it is deleted or rewritten).
    private mutating func forgetUnsynced(_ id: UInt64) {
        for sealed in unsyncedSealed where sealed.id == id { fileSystem.close(sealed.descriptor) }
        unsyncedSealed.removeAll { $0.id == id }
    }

    // MARK: Acknowledging and dropping

    /// Removes `sequences` from the index and records them in their segments' `.acks` files;
    /// deletes sealed segments that became empty and compacts sealed ones that are mostly done
    /// (under a quarter of their bytes undelivered, at least 64 KiB).
    @discardableResult
    mutating func markDone(_ sequences: [UInt64]) -> [OutboxRecord] {
        var removed: [OutboxRecord] = []
        var bySegment: [UInt64: [UInt64]] = [:]
        for sequence in sequences {
            guard let entry = index.remove(sequence) else { continue }
            removed.append(entry.record)
            bySegment[entry.segment, default: []].append(sequence)
        }
        for (segment, done) in bySegment.sorted(by: { $0.key < $1.key }) {
            let name = file(OutboxIndex.acknowledgementName(segment))
            do {
                let descriptor = try fileSystem.openForAppend(name)
                defer { fileSystem.close(descriptor) }
                try fileSystem.write(OutboxFraming.sequencesFrame(done), to: descriptor, path: name)
            } catch {
                logger.warning("outbox could not record acknowledgements", metadata: ["error": "\(error)"])
            }
            guard active?.id != segment, let info = index.segments[segment] else { continue }
            if info.live == 0 {
                try? deleteSegment(segment)
            } else if info.liveBytes * 4 < info.fileBytes, info.fileBytes >= compactionMinimumBytes {
                try? rewrite(segment, keeping: index.entries(in: segment))
            }
        }
        return removed
    }

    /// Drops the oldest events until `adding` more events of `bytes` fit the bounds (a batch
    /// larger than the bounds by itself is kept whole).
    mutating func enforceBounds(adding: Int, bytes: Int, now: Double) -> [OutboxDropReport] {
        var count = index.count
        var liveBytes = index.liveBytes
        guard count + adding > configuration.maxEvents || liveBytes + bytes > configuration.maxBytes else { return [] }
        var byCount: [UInt64] = []
        var byBytes: [UInt64] = []
        for oldest in index.oldestFirst {
            if count + adding > configuration.maxEvents {
                byCount.append(oldest.record.sequence)
            } else if liveBytes + bytes > configuration.maxBytes {
                byBytes.append(oldest.record.sequence)
            } else {
                break
            }
            count -= 1
            liveBytes -= oldest.size
        }
        var reports: [OutboxDropReport] = []
        if !byCount.isEmpty { reports.append(OutboxDropReport(reason: .maxEvents, records: markDone(byCount), timestamp: now)) }
        if !byBytes.isEmpty { reports.append(OutboxDropReport(reason: .maxBytes, records: markDone(byBytes), timestamp: now)) }
        return reports
    }

    /// Drops every event whose time to live has passed at `now`.
    mutating func expire(now: Double) -> [OutboxDropReport] {
        let expired = index.ordered.filter { $0.record.acceptedAt + configuration.timeToLive.inMilliseconds <= now }
        guard !expired.isEmpty else { return [] }
        return [OutboxDropReport(reason: .expired, records: markDone(expired.map(\.record.sequence)), timestamp: now)]
    }

    /// Earliest `acceptedAt + timeToLive` of an undelivered event.
    var nextExpiry: Double? {
        index.ordered.map(\.record.acceptedAt).min().map { $0 + configuration.timeToLive.inMilliseconds }
    }

    // MARK: Segment files

    /// Marks the segment done in its `.acks` file (`fsync`ed unless ``OutboxDurability/writeOnly``,
    /// so a power loss that keeps the segment's removal keeps the mark too and the `.acks` file
    /// left behind is not taken for a lost segment), then removes the segment and the `.acks`
    /// file. The removals are durable with the next directory `fsync`.
    mutating func deleteSegment(_ id: UInt64) throws(OutboxError) {
        forgetUnsynced(id)
        let acknowledgements = file(OutboxIndex.acknowledgementName(id))
        if let descriptor = try? fileSystem.openForAppend(acknowledgements) {
            try? fileSystem.write(OutboxFraming.completeFrame(), to: descriptor, path: acknowledgements)
            if configuration.durability != .writeOnly { try? fileSystem.sync(descriptor, path: acknowledgements) }
            fileSystem.close(descriptor)
        }
        try fileSystem.remove(file(OutboxIndex.segmentName(id)))
        directoryChanges += 1
        try fileSystem.remove(acknowledgements)
        directoryChanges += 1
        index.removeSegment(id)
    }

    /// Replaces a sealed segment's file with one holding only `kept` (atomically), then resets
    /// its `.acks` file. A crash between the two leaves acknowledgements of records that are no
    /// longer there: harmless.
    /// The renames are durable with the next directory `fsync` (until then a power loss keeps
    /// the old files, which hold every kept event too).
    mutating func rewrite(_ id: UInt64, keeping kept: [OutboxIndex.Entry]) throws(OutboxError) {
        var bytes = OutboxFraming.segmentMagic
        for entry in kept { bytes += OutboxFraming.eventFrame(entry.record) }
        try fileSystem.replace(file(OutboxIndex.segmentName(id)), with: bytes)
        directoryChanges += 2  // the temporary file, its rename
        forgetUnsynced(id)  // its handle is the old file's; the new one is synced
        try fileSystem.replace(file(OutboxIndex.acknowledgementName(id)), with: OutboxFraming.acknowledgementMagic)
        directoryChanges += 2
        index.setFileBytes(bytes.count, of: id)
    }

    // MARK: Privacy

    /// Deletes every segment, `.acks` and temporary file and syncs the directory. Segments go
    /// the way ``deleteSegment(_:)`` takes them, so a crash halfway leaves no event and no
    /// false "missing segment" report.
    mutating func purge() throws(OutboxError) {
        sealActive()
        var ids = Set(index.segments.keys)
        index.removeAll()
        var others: [String] = []
        for name in (try? fileSystem.list(path)) ?? [] {
            if let parsed = OutboxIndex.parse(name) { ids.insert(parsed.id) } else if name.hasSuffix(".tmp") { others.append(name) }
        }
        for id in ids.sorted() { try deleteSegment(id) }
        for name in others {
            try fileSystem.remove(file(name))
            directoryChanges += 1
        }
        try syncDirectory()
    }

    /// Rewrites every segment holding an event of `profileId` (delivered or not) without it.
    /// - Returns: the number of undelivered events erased.
    mutating func eraseProfile(_ profileId: String) throws(OutboxError) -> Int {
        var erased = 0
        for id in index.segments.keys.sorted() {
            guard let bytes = try? fileSystem.readAll(file(OutboxIndex.segmentName(id))) else { continue }
            let scan = OutboxFraming.scan(bytes, magic: OutboxFraming.segmentMagic)
            guard scan.payloads.contains(where: { OutboxFraming.decodeEvent($0.payload)?.profileId == profileId }) else { continue }
            if active?.id == id { sealActive() }
            let entries = index.entries(in: id)
            let kept = entries.filter { $0.record.profileId != profileId }
            if kept.isEmpty {
                for entry in entries { index.remove(entry.record.sequence) }
                try deleteSegment(id)
            } else {
                try rewrite(id, keeping: kept)
                for entry in entries where entry.record.profileId == profileId { index.remove(entry.record.sequence) }
            }
            erased += entries.count - kept.count
        }
        try syncDirectory()
        return erased
    }

    /// Syncs (unless write-only) and closes every file, releasing the directory's lock.
    mutating func closeFiles() {
        sealActive()
        if configuration.durability != .writeOnly {
            do {
                try syncAll()
            } catch {
                logger.warning("outbox fsync failed while closing", metadata: ["error": "\(error)"])
            }
        }
        for sealed in unsyncedSealed { fileSystem.close(sealed.descriptor) }
        unsyncedSealed = []
        if lockDescriptor >= 0 {
            fileSystem.unlockFile(lockDescriptor)
            lockDescriptor = -1
        }
    }
}
