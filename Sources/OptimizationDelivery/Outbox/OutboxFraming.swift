/// The on-disk format of outbox files (<doc:TheDurableOutbox>, "File format").
///
/// Every file starts with an 8-byte magic, then frames:
///
///     u32 LE  payload length (1 … 16 MiB)
///     u32 LE  CRC-32C of the 4 length bytes followed by the payload
///     payload
///
/// A segment's payloads are event records; an acknowledgement file's payloads are lists of
/// sequence numbers. Because the checksum covers the length, a torn or corrupted length is
/// detected, and a reader can find the next valid frame after damage. Pure functions.
enum OutboxFraming {
    static let segmentMagic: [UInt8] = Array("OBXSEG1\n".utf8)
    static let acknowledgementMagic: [UInt8] = Array("OBXACK1\n".utf8)
    static let headerBytes = 8
    static let frameOverhead = 8
    static let maxPayload = 16 << 20

    private static let eventKind: UInt8 = 1
    private static let sequencesKind: UInt8 = 2
    private static let completeKind: UInt8 = 3

    // MARK: Writing

    /// The frame around `payload`.
    static func frame(_ payload: [UInt8]) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(payload.count + frameOverhead)
        let length = UInt32(payload.count)
        append(length, to: &bytes)
        let crc = CRC32C.checksum(payload, continuing: CRC32C.checksum(bytes))
        append(crc, to: &bytes)
        bytes += payload
        return bytes
    }

    /// The framed event record.
    static func eventFrame(_ record: OutboxRecord) -> [UInt8] {
        let messageId = Array(record.messageId.utf8)
        let profileId = record.profileId.map { Array($0.utf8) }
        var payload = [UInt8]()
        payload.reserveCapacity(32 + messageId.count + (profileId?.count ?? 0) + record.payload.count)
        payload.append(eventKind)
        payload.append(record.queue == .experience ? 0 : 1)
        payload.append((record.consent ? 1 : 0) | (profileId != nil ? 2 : 0))
        append(record.sequence, to: &payload)
        append(record.acceptedAt.bitPattern, to: &payload)
        append(UInt16(messageId.count), to: &payload)
        payload += messageId
        if let profileId {
            append(UInt16(profileId.count), to: &payload)
            payload += profileId
        }
        append(UInt32(record.payload.count), to: &payload)
        payload += record.payload
        return frame(payload)
    }

    /// The framed list of acknowledged (or dropped) sequence numbers.
    static func sequencesFrame(_ sequences: [UInt64]) -> [UInt8] {
        var payload: [UInt8] = [sequencesKind]
        payload.reserveCapacity(5 + sequences.count * 8)
        append(UInt32(sequences.count), to: &payload)
        for sequence in sequences { append(sequence, to: &payload) }
        return frame(payload)
    }

    /// The frame that marks a segment as fully delivered, written just before it is deleted.
    static func completeFrame() -> [UInt8] {
        frame([completeKind])
    }

    /// Framed size of an event record (what counts toward ``OutboxConfiguration/maxBytes``).
    static func eventFrameSize(messageIdBytes: Int, profileIdBytes: Int?, payloadBytes: Int) -> Int {
        frameOverhead + 3 + 8 + 8 + 2 + messageIdBytes + (profileIdBytes.map { 2 + $0 } ?? 0) + 4 + payloadBytes
    }

    // MARK: Reading

    /// A file's valid frames and what was wrong with the rest.
    struct Scan {
        /// Valid frames: where each starts and its payload.
        var payloads: [(offset: Int, payload: ArraySlice<UInt8>)] = []
        var damage: [Damage] = []
        var hasMagic = true
    }

    enum Damage: Equatable {
        case truncated(offset: Int, bytes: Int)
        case corrupt(offset: Int, bytes: Int)
    }

    /// Reads every valid frame of `bytes` (a whole file). A wrong magic counts as corrupt bytes;
    /// after damage the scan resumes at the next offset where a valid frame starts.
    static func scan(_ bytes: [UInt8], magic: [UInt8]) -> Scan {
        var scan = Scan()
        var offset = 0
        if bytes.count < headerBytes, bytes.elementsEqual(magic.prefix(bytes.count)) {
            return scan  // a file whose creation was interrupted: empty, not damaged
        }
        if bytes.count >= headerBytes, Array(bytes[0..<headerBytes]) == magic {
            offset = headerBytes
        } else {
            scan.hasMagic = false
        }
        var damageStart: Int? = scan.hasMagic ? nil : 0
        bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                switch frameAt(offset, in: raw) {
                case .valid(let length):
                    if let start = damageStart {
                        scan.damage.append(.corrupt(offset: start, bytes: offset - start))
                        damageStart = nil
                    }
                    scan.payloads.append((offset, bytes[(offset + frameOverhead)..<(offset + frameOverhead + length)]))
                    offset += frameOverhead + length
                case .truncated where damageStart == nil:
                    // Nothing valid can follow a frame that runs past the end but it: a torn tail.
                    if nothingValid(after: offset, in: raw) {
                        scan.damage.append(.truncated(offset: offset, bytes: raw.count - offset))
                        offset = raw.count
                    } else {
                        damageStart = offset
                        offset += 1
                    }
                case .truncated, .invalid:
                    if damageStart == nil { damageStart = offset }
                    offset += 1
                }
            }
        }
        if let start = damageStart, start < bytes.count {
            scan.damage.append(.corrupt(offset: start, bytes: bytes.count - start))
        }
        return scan
    }

    private enum FrameCheck {
        case valid(length: Int)
        case truncated
        case invalid
    }

    private static func frameAt(_ offset: Int, in raw: UnsafeRawBufferPointer) -> FrameCheck {
        guard raw.count - offset >= frameOverhead else { return .truncated }
        let length = Int(readUInt32(raw, at: offset))
        guard length >= 1, length <= maxPayload else { return .invalid }
        guard raw.count - offset - frameOverhead >= length else { return .truncated }
        let stored = readUInt32(raw, at: offset + 4)
        let lengthBytes = UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + 4)])
        let payload = UnsafeRawBufferPointer(rebasing: raw[(offset + frameOverhead)..<(offset + frameOverhead + length)])
        let crc = CRC32C.checksum(payload, continuing: CRC32C.checksum(lengthBytes))
        return crc == stored ? .valid(length: length) : .invalid
    }

    private static func nothingValid(after offset: Int, in raw: UnsafeRawBufferPointer) -> Bool {
        var next = offset + 1
        while next < raw.count {
            if case .valid = frameAt(next, in: raw) { return false }
            next += 1
        }
        return true
    }

    /// What an acknowledgement file's payload says.
    enum AcknowledgementEntry: Equatable {
        case sequences([UInt64])
        case complete
    }

    static func decodeEvent(_ payload: ArraySlice<UInt8>) -> OutboxRecord? {
        var reader = Reader(bytes: payload)
        guard reader.byte() == eventKind,
              let queueByte = reader.byte(), queueByte <= 1,
              let flags = reader.byte(), flags & ~3 == 0,
              let sequence = reader.uint64(), let time = reader.uint64(),
              let messageIdLength = reader.uint16(), messageIdLength > 0,
              let messageIdBytes = reader.bytes(Int(messageIdLength)),
              let messageId = String(validating: messageIdBytes, as: UTF8.self)
        else { return nil }
        var profileId: String?
        if flags & 2 != 0 {
            guard let length = reader.uint16(), let bytes = reader.bytes(Int(length)),
                  let text = String(validating: bytes, as: UTF8.self)
            else { return nil }
            profileId = text
        }
        guard let eventLength = reader.uint32(), let event = reader.bytes(Int(eventLength)), reader.isAtEnd else { return nil }
        let acceptedAt = Double(bitPattern: time)
        guard OutboxEvent.validAcceptedAt.contains(acceptedAt) else { return nil }
        return OutboxRecord(
            sequence: sequence, queue: queueByte == 0 ? .experience : .insights, messageId: messageId,
            profileId: profileId, consent: flags & 1 != 0, acceptedAt: acceptedAt, payload: Array(event))
    }

    static func decodeAcknowledgement(_ payload: ArraySlice<UInt8>) -> AcknowledgementEntry? {
        var reader = Reader(bytes: payload)
        switch reader.byte() {
        case completeKind:
            return reader.isAtEnd ? .complete : nil
        case sequencesKind:
            guard let count = reader.uint32(), Int(count) * 8 == payload.count - 5 else { return nil }
            var sequences = [UInt64]()
            sequences.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let sequence = reader.uint64() else { return nil }
                sequences.append(sequence)
            }
            return .sequences(sequences)
        default:
            return nil
        }
    }

    // MARK: Little-endian helpers

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    private static func readUInt32(_ raw: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(raw[offset]) | UInt32(raw[offset + 1]) << 8 | UInt32(raw[offset + 2]) << 16 | UInt32(raw[offset + 3]) << 24
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var index: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            index = bytes.startIndex
        }

        var isAtEnd: Bool { index == bytes.endIndex }

        mutating func byte() -> UInt8? {
            guard index < bytes.endIndex else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func bytes(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, bytes.endIndex - index >= count else { return nil }
            defer { index += count }
            return bytes[index..<(index + count)]
        }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            guard let slice = bytes(MemoryLayout<T>.size) else { return nil }
            var value: T = 0
            for (shift, byte) in slice.enumerated() { value |= T(byte) << (shift * 8) }
            return value
        }

        mutating func uint16() -> UInt16? { integer(UInt16.self) }
        mutating func uint32() -> UInt32? { integer(UInt32.self) }
        mutating func uint64() -> UInt64? { integer(UInt64.self) }
    }
}
