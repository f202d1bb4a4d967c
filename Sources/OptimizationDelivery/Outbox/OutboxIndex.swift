/// The in-memory view of an outbox directory: undelivered events in order, per-segment counts,
/// and the lookups acknowledgement and erasure need. A value type guarded by the owning
/// ``DurableOutbox``'s lock; it never touches files.
struct OutboxIndex: Sendable {
    struct Entry: Sendable {
        var record: OutboxRecord
        var segment: UInt64
        /// Framed size on disk.
        var size: Int
    }

    struct Segment: Sendable {
        let id: UInt64
        var live = 0
        var liveBytes = 0
        var fileBytes = 0
    }

    private(set) var entries: [UInt64: Entry] = [:]
    private(set) var segments: [UInt64: Segment] = [:]
    private(set) var liveBytes = 0
    private var bySequenceOrder: [UInt64] = []
    private var head = 0
    private var byMessageId: [String: UInt64] = [:]
    /// Per queue, sequences in increasing order from `head`; removed ones are skipped lazily.
    private var queueOrder: [EventQueueKind: (sequences: [UInt64], head: Int)] = [:]

    var count: Int { entries.count }

    /// The segment file names of `id`.
    static func segmentName(_ id: UInt64) -> String {
        let hex = String(id, radix: 16)
        return "segment-" + String(repeating: "0", count: max(0, 16 - hex.count)) + hex + ".log"
    }

    static func acknowledgementName(_ id: UInt64) -> String {
        String(segmentName(id).dropLast(4)) + ".acks"
    }

    /// The segment id of a file name (`segment-<16 hex>.log` or `.acks`), and whether it is the log.
    static func parse(_ name: String) -> (id: UInt64, isLog: Bool)? {
        guard name.hasPrefix("segment-"), name.count == 8 + 16 + 4 || name.count == 8 + 16 + 5 else { return nil }
        let isLog = name.hasSuffix(".log")
        guard isLog || name.hasSuffix(".acks") else { return nil }
        let hex = name.dropFirst(8).prefix(16)
        guard let id = UInt64(hex, radix: 16) else { return nil }
        return (id, isLog)
    }

    mutating func addSegment(_ id: UInt64, fileBytes: Int) {
        segments[id] = Segment(id: id, fileBytes: fileBytes)
    }

    mutating func setFileBytes(_ bytes: Int, of id: UInt64) {
        segments[id]?.fileBytes = bytes
    }

    mutating func removeSegment(_ id: UInt64) {
        segments[id] = nil
    }

    /// Adds an undelivered event; sequences must be added in increasing order except while
    /// loading (then call ``sortOrder()``).
    mutating func insert(_ record: OutboxRecord, segment: UInt64, size: Int) {
        entries[record.sequence] = Entry(record: record, segment: segment, size: size)
        bySequenceOrder.append(record.sequence)
        queueOrder[record.queue, default: ([], 0)].sequences.append(record.sequence)
        byMessageId[record.messageId] = record.sequence
        segments[segment, default: Segment(id: segment)].live += 1
        segments[segment]?.liveBytes += size
        liveBytes += size
    }

    mutating func sortOrder() {
        bySequenceOrder = Array(bySequenceOrder[head...]).filter { entries[$0] != nil }.sorted()
        head = 0
        var rebuilt: [EventQueueKind: (sequences: [UInt64], head: Int)] = [:]
        for sequence in bySequenceOrder {
            if let queue = entries[sequence]?.record.queue { rebuilt[queue, default: ([], 0)].sequences.append(sequence) }
        }
        queueOrder = rebuilt
    }

    /// Removes an event; nil when it is not undelivered.
    @discardableResult
    mutating func remove(_ sequence: UInt64) -> Entry? {
        guard let entry = entries.removeValue(forKey: sequence) else { return nil }
        if byMessageId[entry.record.messageId] == sequence { byMessageId[entry.record.messageId] = nil }
        segments[entry.segment]?.live -= 1
        segments[entry.segment]?.liveBytes -= entry.size
        liveBytes -= entry.size
        skipRemoved()
        skipRemoved(in: entry.record.queue)
        return entry
    }

    /// Undelivered events of `queue` with a sequence above `sequence`, oldest first, at most
    /// `limit`: O(log n + what it returns + removed entries it passes).
    func records(of queue: EventQueueKind, after sequence: UInt64, limit: Int) -> [OutboxRecord] {
        guard limit > 0, let order = queueOrder[queue] else { return [] }
        var low = order.head
        var high = order.sequences.count
        while low < high {
            let middle = (low + high) / 2
            if order.sequences[middle] <= sequence { low = middle + 1 } else { high = middle }
        }
        var found: [OutboxRecord] = []
        var index = low
        while index < order.sequences.count, found.count < limit {
            if let entry = entries[order.sequences[index]] { found.append(entry.record) }
            index += 1
        }
        return found
    }

    func sequence(ofMessageId messageId: String) -> UInt64? {
        byMessageId[messageId]
    }

    /// Undelivered events in sequence order.
    var ordered: [Entry] {
        bySequenceOrder[head...].compactMap { entries[$0] }
    }

    /// Undelivered events in sequence order, computed as iterated.
    var oldestFirst: some Sequence<Entry> {
        bySequenceOrder[head...].lazy.compactMap { entries[$0] }
    }

    /// Undelivered events of one segment, in order.
    func entries(in segment: UInt64) -> [Entry] {
        ordered.filter { $0.segment == segment }
    }

    /// Forgets everything (segments included).
    mutating func removeAll() {
        self = OutboxIndex()
    }

    private mutating func skipRemoved(in queue: EventQueueKind) {
        guard var order = queueOrder[queue] else { return }
        queueOrder[queue] = nil // edit in place, without a copy
        while order.head < order.sequences.count, entries[order.sequences[order.head]] == nil { order.head += 1 }
        if order.head > 1_024, order.head * 2 > order.sequences.count {
            order.sequences.removeFirst(order.head)
            order.head = 0
        }
        queueOrder[queue] = order
    }

    private mutating func skipRemoved() {
        while head < bySequenceOrder.count, entries[bySequenceOrder[head]] == nil { head += 1 }
        if head > 1_024, head * 2 > bySequenceOrder.count {
            bySequenceOrder.removeFirst(head)
            head = 0
        }
    }
}
