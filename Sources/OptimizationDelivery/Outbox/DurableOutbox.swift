import Foundation
import HostPlatform
import Logging
import Synchronization

/// A crash-safe store of accepted events waiting for delivery, in one private directory.
///
/// Events are appended to segment files (`segment-<first sequence>.log`), each event one framed,
/// checksummed record; acknowledgements go to the segment's `.acks` file. A segment (and its
/// `.acks` file) is deleted once every event in it was acknowledged or dropped. Opening the
/// directory recovers every undelivered event in order (``recovery``); damaged or missing parts
/// are skipped and reported, never fatal. Format, guarantees and the integration contract:
/// <doc:TheDurableOutbox>.
///
/// - **Durability.** ``append(_:)`` returns after the record was written with `write(2)`, so it
///   survives a crash of the process; ``OutboxConfiguration/durability`` says what survives a
///   crash of the machine.
/// - **Ownership.** One outbox per directory: a POSIX record lock on `outbox.lock` is held until
///   ``close()``; a second opener gets ``OutboxError/directoryOwnedInThisProcess(path:)`` in
///   this process and ``OutboxError/directoryLocked(path:)`` in another. Child processes do not
///   inherit the lock.
/// - **Bounds.** ``OutboxConfiguration/maxEvents``, ``OutboxConfiguration/maxBytes`` and
///   ``OutboxConfiguration/timeToLive`` drop the oldest events, reported on ``drops``.
/// - **Privacy.** Files are mode 0600 in a 0700 directory. ``purge()`` removes every event;
///   ``eraseProfile(_:)`` rewrites the segments that hold a profile's events without them. Logs
///   carry file names, counts and sizes, never event content or profile ids.
/// - **Threading.** Every method is synchronous, thread-safe and may be called from any thread
///   or task; one lock guards the files. The periodic `fsync` and expiry run on the injected
///   clock's timers. Drop reports are delivered after the lock is released.
public final class DurableOutbox: Sendable {
    /// The directory the outbox owns.
    public let directory: URL
    /// What opening found: undelivered events in order, and damage that was skipped.
    public let recovery: OutboxRecovery
    /// Every drop report (bounds, time to live), including those made while opening. A
    /// single-consumer stream that keeps the newest 1,024 unread reports; finished by ``close()``.
    public let drops: AsyncStream<OutboxDropReport>

    let configuration: OutboxConfiguration
    let dropContinuation: AsyncStream<OutboxDropReport>.Continuation
    let clock: any HostClock
    let logger: Logger
    let fileSystem: any OutboxFileSystem
    let state: Mutex<Guarded>

    /// The lock file's name inside the directory.
    public static let lockFileName = "outbox.lock"

    struct Guarded: Sendable {
        var storage: OutboxStorage
        var syncTimer: (any HostTimer)?
        var expiryTimer: (any HostTimer)?
        var expiryDue: Double?
        var closed = false
    }

    /// Opens (creating if needed) the outbox in `directory` and recovers what it holds.
    /// - Parameters:
    ///   - directory: created with mode 0700 (an existing one is set to 0700).
    ///   - configuration: bounds, time to live, durability and the drop callback.
    ///   - clock: time for `acceptedAt`, the time to live and the periodic `fsync`.
    ///   - logger: recovery issues at `warning`, drops at `notice` (counts only).
    /// - Throws: ``OutboxError/directoryLocked(path:)`` when another process's outbox owns the
    ///   directory, ``OutboxError/directoryOwnedInThisProcess(path:)`` when another of this process's does;
    ///   ``OutboxError/cannotOpen(path:errno:)`` when it cannot be created or locked. Damaged
    ///   content never throws: see ``recovery``.
    public convenience init(
        directory: URL, configuration: OutboxConfiguration = .init(), clock: any HostClock = SystemClock(),
        logger: Logger
    ) throws(OutboxError) {
        try self.init(directory: directory, configuration: configuration, clock: clock, logger: logger, fileSystem: PosixOutboxFileSystem())
    }

    /// ``init(directory:configuration:clock:logger:)`` over another file system (tests: a model
    /// of what a crash keeps, with injected faults).
    /// - Parameter compactionMinimumBytes: the smallest sealed segment that is compacted.
    package init(
        directory: URL, configuration: OutboxConfiguration = .init(), clock: any HostClock = SystemClock(),
        logger: Logger, fileSystem: any OutboxFileSystem, compactionMinimumBytes: Int = 64 << 10
    ) throws(OutboxError) {
        let path = directory.path
        try fileSystem.makePrivateDirectory(path)
        let lockDescriptor = try fileSystem.lockFile(path + "/" + Self.lockFileName, directory: path)
        let loaded = OutboxLoader.load(path: path, fileSystem: fileSystem)
        var storage = OutboxStorage(path: path, configuration: configuration, logger: logger, fileSystem: fileSystem)
        storage.compactionMinimumBytes = compactionMinimumBytes
        storage.index = loaded.index
        storage.nextSequence = loaded.nextSequence
        storage.lockDescriptor = lockDescriptor
        for (id, segment) in loaded.index.segments where segment.live == 0 {
            try? storage.deleteSegment(id)
        }
        let now = clock.now()
        var reports = storage.expire(now: now)
        reports += storage.enforceBounds(adding: 0, bytes: 0, now: now)

        self.directory = directory
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.fileSystem = fileSystem
        recovery = OutboxRecovery(records: storage.index.ordered.map(\.record), issues: loaded.issues)
        let (stream, continuation) = AsyncStream.makeStream(of: OutboxDropReport.self, bufferingPolicy: .bufferingNewest(1_024))
        drops = stream
        dropContinuation = continuation
        state = Mutex(Guarded(storage: storage))

        for issue in loaded.issues {
            logger.warning("outbox recovery skipped damaged data", metadata: ["directory": "\(path)", "issue": "\(issue)"])
        }
        if !recovery.records.isEmpty {
            logger.info("outbox recovered undelivered events", metadata: ["count": "\(recovery.records.count)"])
        }
        state.withLock { guarded in
            scheduleExpiry(&guarded)
            scheduleSync(&guarded)
        }
        deliver(reports)
    }

    deinit {
        close()
    }

    // MARK: Appending

    /// Stores one accepted event and returns once it is written per the durability policy. A
    /// `messageId` that is still undelivered in the outbox is not stored twice: its existing
    /// record is returned. Making room may drop the oldest events (reported on ``drops``).
    /// - Throws: ``OutboxError/invalidEvent(_:)``, ``OutboxError/eventTooLarge(bytes:limit:)``,
    ///   ``OutboxError/ioFailure(path:operation:errno:)`` (then nothing of it is kept),
    ///   ``OutboxError/closed``.
    @discardableResult
    public func append(_ event: OutboxEvent) throws(OutboxError) -> OutboxRecord {
        try append(contentsOf: [event])[0]
    }

    /// Stores several events with one `write(2)` (and at most one `fsync`): all of them or, when
    /// it throws, none. Duplicate `messageId`s (in the batch or undelivered) are stored once.
    /// - Returns: their records, in the order given.
    @discardableResult
    public func append(contentsOf events: [OutboxEvent]) throws(OutboxError) -> [OutboxRecord] {
        for event in events { try validate(event) }
        var reports: [OutboxDropReport] = []
        defer { deliver(reports) }
        return try state.withLock { (guarded) throws(OutboxError) -> [OutboxRecord] in
            guard !guarded.closed else { throw .closed }
            let now = clock.now()
            var results: [OutboxRecord] = []
            var fresh: [(record: OutboxRecord, size: Int)] = []
            var freshByMessageId: [String: OutboxRecord] = [:]
            for event in events {
                if let sequence = guarded.storage.index.sequence(ofMessageId: event.messageId),
                   let existing = guarded.storage.index.entries[sequence] {
                    results.append(existing.record)
                } else if let earlier = freshByMessageId[event.messageId] {
                    results.append(earlier)
                } else {
                    let record = OutboxRecord(
                        sequence: guarded.storage.nextSequence + UInt64(fresh.count), queue: event.queue,
                        messageId: event.messageId, profileId: event.profileId, consent: event.consent,
                        acceptedAt: event.acceptedAt ?? now, payload: event.payload)
                    fresh.append((record, Self.frameSize(event)))
                    freshByMessageId[event.messageId] = record
                    results.append(record)
                }
            }
            guard !fresh.isEmpty else { return results }
            reports += guarded.storage.enforceBounds(adding: fresh.count, bytes: fresh.reduce(0) { $0 + $1.size }, now: now)
            try guarded.storage.write(fresh)
            scheduleSync(&guarded)
            scheduleExpiry(&guarded, candidate: fresh.map(\.record.acceptedAt).min())
            return results
        }
    }

    // MARK: Acknowledging

    /// Marks events as done: delivered (a 2xx), or dropped by a delivery rule (a refused batch,
    /// disabled delivery, a queue cap, an expired event). They are not recovered again; a
    /// segment whose events are all done is deleted. Unknown or already done sequences are
    /// ignored. Never throws: if an acknowledgement cannot be written (logged at `warning`), the
    /// events may be recovered and sent again after a restart, with their `messageId`.
    /// - Returns: how many undelivered events this removed.
    @discardableResult
    public func acknowledge(sequences: some Sequence<UInt64>) -> Int {
        state.withLock { guarded in
            guard !guarded.closed else { return 0 }
            defer { scheduleSync(&guarded) }
            return guarded.storage.markDone(Array(sequences)).count
        }
    }

    /// ``acknowledge(sequences:)`` by `messageId` (unknown ids are ignored).
    @discardableResult
    public func acknowledge(messageIds: some Sequence<String>) -> Int {
        state.withLock { guarded in
            guard !guarded.closed else { return 0 }
            let sequences = messageIds.compactMap { guarded.storage.index.sequence(ofMessageId: $0) }
            defer { scheduleSync(&guarded) }
            return guarded.storage.markDone(sequences).count
        }
    }

    // MARK: Reading

    /// The undelivered events, in append order; only `queue`'s when given.
    public func pendingRecords(queue: EventQueueKind? = nil) -> [OutboxRecord] {
        state.withLock { guarded in
            guarded.storage.index.ordered.map(\.record).filter { queue == nil || $0.queue == queue }
        }
    }

    /// Up to `limit` undelivered events of `queue` appended after `sequence`, in append order:
    /// the next part of a backlog that a consumer holds a window of (its last loaded sequence,
    /// 0 for the start). Cost: O(log n + limit).
    public func pendingRecords(queue: EventQueueKind, after sequence: UInt64, limit: Int) -> [OutboxRecord] {
        state.withLock { guarded in
            guarded.storage.index.records(of: queue, after: sequence, limit: limit)
        }
    }

    /// Number of undelivered events.
    public var count: Int {
        state.withLock { $0.storage.index.count }
    }

    /// Bytes of undelivered events (their framed size: what ``OutboxConfiguration/maxBytes`` bounds).
    public var pendingBytes: Int {
        state.withLock { $0.storage.index.liveBytes }
    }

    /// Number of segment files.
    public var segmentCount: Int {
        state.withLock { $0.storage.index.segments.count }
    }

    // MARK: Internals

    private static func frameSize(_ event: OutboxEvent) -> Int {
        OutboxFraming.eventFrameSize(
            messageIdBytes: event.messageId.utf8.count, profileIdBytes: event.profileId?.utf8.count,
            payloadBytes: event.payload.count)
    }

    private func validate(_ event: OutboxEvent) throws(OutboxError) {
        let messageIdBytes = event.messageId.utf8.count
        guard messageIdBytes > 0, messageIdBytes <= 1_024 else { throw .invalidEvent("the messageId must have 1 to 1,024 bytes") }
        if let profileId = event.profileId, profileId.utf8.count > 1_024 {
            throw .invalidEvent("the profile id must have at most 1,024 bytes")
        }
        if let acceptedAt = event.acceptedAt, !OutboxEvent.validAcceptedAt.contains(acceptedAt) {
            throw .invalidEvent("acceptedAt must be milliseconds from 0 to 8.64e15")
        }
        let size = Self.frameSize(event)
        let limit = min(configuration.maxBytes, OutboxFraming.maxPayload)
        guard size <= limit else { throw .eventTooLarge(bytes: size, limit: limit) }
    }

    func deliver(_ reports: [OutboxDropReport]) {
        for report in reports where !report.records.isEmpty {
            logger.notice("outbox dropped events", metadata: [
                "reason": "\(report.reason.rawValue)", "count": "\(report.records.count)",
            ])
            configuration.onDrop?(report)
            dropContinuation.yield(report)
        }
    }
}
