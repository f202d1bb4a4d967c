#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging

/// The files and in-memory index of one outbox directory: every file mutation of
/// ``DurableOutbox`` (append, acknowledge, drop, delete, rewrite, purge). Not thread-safe: the
/// owning ``DurableOutbox`` keeps it behind its lock. Timers and reporting are the owner's.
struct OutboxStorage: Sendable {
    let path: String
    let configuration: OutboxConfiguration
    let logger: Logger
    var index = OutboxIndex()
    var nextSequence: UInt64 = 1
    var lockDescriptor: Int32 = -1
    var active: (id: UInt64, descriptor: Int32, bytes: Int)?
    /// Written since the last `fsync` of the active segment.
    var dirty = false

    func file(_ name: String) -> String {
        path + "/" + name
    }

    var activePath: String? {
        active.map { file(OutboxIndex.segmentName($0.id)) }
    }

    // MARK: Appending

    /// Writes `records` (consecutive sequences from ``nextSequence``) with one `write(2)` and
    /// indexes them. On failure nothing is kept (the torn bytes are cut, a new segment follows).
    mutating func write(_ records: [(record: OutboxRecord, size: Int)]) throws(OutboxError) {
        let segment = try activeSegment()
        var bytes: [UInt8] = []
        for item in records { bytes += OutboxFraming.eventFrame(item.record) }
        let segmentPath = file(OutboxIndex.segmentName(segment.id))
        do {
            try OutboxFileSystem.write(bytes, to: segment.descriptor, path: segmentPath)
            if configuration.durability == .syncEveryAppend {
                try OutboxFileSystem.sync(segment.descriptor, path: segmentPath)
            }
        } catch {
            _ = OutboxFileSystem.truncate(segment.descriptor, to: segment.bytes)
            sealActive()
            throw error
        }
        active?.bytes += bytes.count
        index.setFileBytes(segment.bytes + bytes.count, of: segment.id)
        for item in records { index.insert(item.record, segment: segment.id, size: item.size) }
        nextSequence += UInt64(records.count)
        if case .syncInterval = configuration.durability { dirty = true }
    }

    /// The segment appends go to, starting a new one when there is none or it is full. The
    /// segment is created before its `.acks` file, so a crash in between leaves an empty segment
    /// (removed silently at the next open), never an orphan `.acks` file that would look like a
    /// lost segment.
    private mutating func activeSegment() throws(OutboxError) -> (id: UInt64, descriptor: Int32, bytes: Int) {
        if let active, active.bytes < configuration.segmentBytes { return active }
        sealActive()
        let id = nextSequence
        let segmentPath = file(OutboxIndex.segmentName(id))
        let descriptor = try OutboxFileSystem.createForAppend(segmentPath, header: OutboxFraming.segmentMagic)
        do {
            let acknowledgements = try OutboxFileSystem.createForAppend(
                file(OutboxIndex.acknowledgementName(id)), header: OutboxFraming.acknowledgementMagic)
            Glibc.close(acknowledgements)
        } catch {
            Glibc.close(descriptor)
            try? OutboxFileSystem.remove(segmentPath)
            throw error
        }
        if configuration.durability != .writeOnly { try? OutboxFileSystem.syncDirectory(path) }
        index.addSegment(id, fileBytes: OutboxFraming.headerBytes)
        active = (id, descriptor, OutboxFraming.headerBytes)
        return active!
    }

    /// `fsync`s the active segment.
    mutating func syncActive() throws(OutboxError) {
        guard let active, let activePath else { return }
        try OutboxFileSystem.sync(active.descriptor, path: activePath)
        dirty = false
    }

    /// Closes the active segment (syncing unsynced writes under a sync policy); deletes it when
    /// all its events are done.
    mutating func sealActive() {
        guard let segment = active else { return }
        if dirty, configuration.durability != .writeOnly { try? syncActive() }
        dirty = false
        Glibc.close(segment.descriptor)
        active = nil
        if index.segments[segment.id]?.live == 0 { try? deleteSegment(segment.id) }
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
                let descriptor = try OutboxFileSystem.openForAppend(name)
                defer { Glibc.close(descriptor) }
                try OutboxFileSystem.write(OutboxFraming.sequencesFrame(done), to: descriptor, path: name)
            } catch {
                logger.warning("outbox could not record acknowledgements", metadata: ["error": "\(error)"])
            }
            guard active?.id != segment, let info = index.segments[segment] else { continue }
            if info.live == 0 {
                try? deleteSegment(segment)
            } else if info.liveBytes * 4 < info.fileBytes, info.fileBytes >= 64 << 10 {
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
        let expired = index.ordered.filter { $0.record.acceptedAt + configuration.timeToLiveMs <= now }
        guard !expired.isEmpty else { return [] }
        return [OutboxDropReport(reason: .expired, records: markDone(expired.map(\.record.sequence)), timestamp: now)]
    }

    /// Earliest `acceptedAt + timeToLive` of an undelivered event.
    var nextExpiry: Double? {
        index.ordered.map(\.record.acceptedAt).min().map { $0 + configuration.timeToLiveMs }
    }

    // MARK: Segment files

    /// Marks the segment done in its `.acks` file, then removes the segment and the `.acks` file.
    mutating func deleteSegment(_ id: UInt64) throws(OutboxError) {
        let acknowledgements = file(OutboxIndex.acknowledgementName(id))
        if let descriptor = try? OutboxFileSystem.openForAppend(acknowledgements) {
            try? OutboxFileSystem.write(OutboxFraming.completeFrame(), to: descriptor, path: acknowledgements)
            Glibc.close(descriptor)
        }
        try OutboxFileSystem.remove(file(OutboxIndex.segmentName(id)))
        try OutboxFileSystem.remove(acknowledgements)
        index.removeSegment(id)
    }

    /// Replaces a sealed segment's file with one holding only `kept` (atomically), then resets
    /// its `.acks` file. A crash between the two leaves acknowledgements of records that are no
    /// longer there: harmless.
    mutating func rewrite(_ id: UInt64, keeping kept: [OutboxIndex.Entry]) throws(OutboxError) {
        var bytes = OutboxFraming.segmentMagic
        for entry in kept { bytes += OutboxFraming.eventFrame(entry.record) }
        try OutboxFileSystem.replace(file(OutboxIndex.segmentName(id)), with: bytes)
        try OutboxFileSystem.replace(file(OutboxIndex.acknowledgementName(id)), with: OutboxFraming.acknowledgementMagic)
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
        for name in (try? OutboxFileSystem.list(path)) ?? [] {
            if let parsed = OutboxIndex.parse(name) { ids.insert(parsed.id) } else if name.hasSuffix(".tmp") { others.append(name) }
        }
        for id in ids.sorted() { try deleteSegment(id) }
        for name in others { try OutboxFileSystem.remove(file(name)) }
        try OutboxFileSystem.syncDirectory(path)
    }

    /// Rewrites every segment holding an event of `profileId` (delivered or not) without it.
    /// - Returns: the number of undelivered events erased.
    mutating func eraseProfile(_ profileId: String) throws(OutboxError) -> Int {
        var erased = 0
        for id in index.segments.keys.sorted() {
            guard let bytes = try? OutboxFileSystem.readAll(file(OutboxIndex.segmentName(id))) else { continue }
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
        try OutboxFileSystem.syncDirectory(path)
        return erased
    }

    /// Syncs (unless write-only) and closes every file, releasing the directory's lock.
    mutating func closeFiles() {
        sealActive()
        if lockDescriptor >= 0 {
            Glibc.close(lockDescriptor)
            lockDescriptor = -1
        }
    }
}
