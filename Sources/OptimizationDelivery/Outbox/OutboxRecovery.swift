/// What ``DurableOutbox`` found on disk when it opened.
public struct OutboxRecovery: Sendable, Equatable {
    /// Every undelivered event, in append order (sequence order) across both queues, with the
    /// bytes, `messageId`, time and consent flag it was appended with. Events dropped while
    /// opening (time to live, bounds) are not in it; they are reported as drops.
    public let records: [OutboxRecord]
    /// What could not be read. Opening never fails because of damaged files.
    public let issues: [OutboxRecoveryIssue]

    /// The undelivered events of one queue, in order.
    public func records(for queue: EventQueueKind) -> [OutboxRecord] {
        records.filter { $0.queue == queue }
    }

    /// A recovery of `records` with the `issues` met while reading them.
    public init(records: [OutboxRecord], issues: [OutboxRecoveryIssue]) {
        self.records = records
        self.issues = issues
    }
}

/// A damaged or missing part of the outbox found while opening; logged at `warning` (file names,
/// offsets and sizes only) and skipped.
public enum OutboxRecoveryIssue: Sendable, Equatable, CustomStringConvertible {
    /// The last frame of a segment ends before its length says (a write torn by a crash).
    /// `bytes` were ignored from `offset` to the end of the file.
    case truncatedTail(segment: String, offset: Int, bytes: Int)
    /// Bytes that are not a valid frame (checksum or structure) from `offset`: skipped up to
    /// the next valid frame (or the end of the file).
    case corruptRecords(segment: String, offset: Int, bytes: Int)
    /// A segment's acknowledgement file exists but the segment does not: its events are lost.
    case missingSegment(segment: String)
    /// A segment exists without its acknowledgement file: its events count as undelivered
    /// (some may be delivered again, with the same `messageId`).
    case missingAcknowledgements(segment: String)
    /// A file of the outbox could not be read at all (`errno`).
    case unreadableFile(name: String, errno: Int32)

    public var description: String {
        switch self {
        case .truncatedTail(let segment, let offset, let bytes):
            return "\(segment): truncated record at offset \(offset) (\(bytes) bytes ignored)"
        case .corruptRecords(let segment, let offset, let bytes):
            return "\(segment): \(bytes) corrupt bytes skipped at offset \(offset)"
        case .missingSegment(let segment):
            return "\(segment): segment missing (its events are lost)"
        case .missingAcknowledgements(let segment):
            return "\(segment): acknowledgement file missing (its events count as undelivered)"
        case .unreadableFile(let name, let code):
            return "\(name): unreadable (errno \(code))"
        }
    }
}
