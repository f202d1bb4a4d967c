/// One field of a protobuf message as it is on the wire: its number and its value, undecoded.
/// The test kit reads OTLP's protobuf messages with these (``OTLPTraceExport``), not with
/// generated code, so the library's test kit needs no protobuf runtime.
public struct ProtobufField: Sendable, Equatable {
    /// A field's value by wire type.
    public enum Value: Sendable, Equatable {
        /// Wire type 0: an `int32`, `int64`, `uint32`, `uint64`, `bool` or `enum` (two's
        /// complement for negative `int64`).
        case varint(UInt64)
        /// Wire type 1: a `fixed64`, `sfixed64` or `double` (little-endian bits).
        case fixed64(UInt64)
        /// Wire type 2: a `string`, `bytes`, embedded message or packed repeated field.
        case lengthDelimited([UInt8])
        /// Wire type 5: a `fixed32`, `sfixed32` or `float` (little-endian bits).
        case fixed32(UInt32)
    }

    /// The field number of the message's `.proto` definition.
    public var number: Int
    /// The value, undecoded.
    public var value: Value

    /// Creates a field (for building messages in tests).
    public init(number: Int, value: Value) {
        self.number = number
        self.value = value
    }

    /// The value's bytes when it is length-delimited (a message, string or bytes); nil otherwise.
    public var bytes: [UInt8]? {
        if case .lengthDelimited(let bytes) = value { return bytes }
        return nil
    }

    /// The value as UTF-8 text when it is length-delimited; nil otherwise. Invalid UTF-8 is
    /// repaired (U+FFFD), as a protobuf `string` never holds it.
    public var string: String? {
        bytes.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The value as a varint; nil for another wire type.
    public var varint: UInt64? {
        if case .varint(let value) = value { return value }
        return nil
    }

    /// The value as 64 fixed bits; nil for another wire type.
    public var fixed64: UInt64? {
        if case .fixed64(let value) = value { return value }
        return nil
    }
}

/// Why a protobuf message could not be read.
public struct ProtobufWireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong and at which byte offset of the message.
    public let description: String

    /// Creates the error with its description.
    public init(_ description: String) {
        self.description = description
    }
}

/// Reads the fields of one protobuf message (the binary wire format), in the order they were
/// written, without a schema: the caller picks the fields it knows by number and skips the rest,
/// as a protobuf reader must. Groups (wire types 3 and 4, deprecated) are refused.
///
/// ```swift
/// for field in try ProtobufWireReader.fields(of: bytes) where field.number == 5 {
///     print(field.string ?? "")
/// }
/// ```
public enum ProtobufWireReader {
    /// Every field of `message`, in wire order (a repeated field appears once per element).
    /// - Throws: ``ProtobufWireError`` for a truncated varint, length or fixed-width value, a
    ///   length past the end, field number 0, or a group or unknown wire type.
    public static func fields(of message: [UInt8]) throws -> [ProtobufField] {
        var fields: [ProtobufField] = []
        var offset = 0
        while offset < message.count {
            let keyOffset = offset
            let key = try readVarint(message, &offset)
            let number = key >> 3
            guard number > 0, number <= 536_870_911 else {
                throw ProtobufWireError("field number \(number) at offset \(keyOffset)")
            }
            let value: ProtobufField.Value
            switch key & 7 {
            case 0:
                value = .varint(try readVarint(message, &offset))
            case 1:
                value = .fixed64(try readFixed(message, &offset, width: 8))
            case 2:
                let length = try readVarint(message, &offset)
                guard length <= UInt64(message.count - offset) else {
                    throw ProtobufWireError("length \(length) at offset \(keyOffset) runs past the end (\(message.count) bytes)")
                }
                let end = offset + Int(length)
                value = .lengthDelimited(Array(message[offset..<end]))
                offset = end
            case 5:
                value = .fixed32(UInt32(try readFixed(message, &offset, width: 4)))
            default:
                throw ProtobufWireError("wire type \(key & 7) of field \(number) at offset \(keyOffset) is not supported")
            }
            fields.append(ProtobufField(number: Int(number), value: value))
        }
        return fields
    }

    /// The bytes of `fields` in the wire format, in the given order: the writing half, for
    /// building messages in tests.
    public static func encode(_ fields: [ProtobufField]) -> [UInt8] {
        var bytes: [UInt8] = []
        for field in fields {
            let number = UInt64(field.number) << 3
            switch field.value {
            case .varint(let value):
                appendVarint(number | 0, to: &bytes)
                appendVarint(value, to: &bytes)
            case .fixed64(let value):
                appendVarint(number | 1, to: &bytes)
                for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
            case .lengthDelimited(let value):
                appendVarint(number | 2, to: &bytes)
                appendVarint(UInt64(value.count), to: &bytes)
                bytes += value
            case .fixed32(let value):
                appendVarint(number | 5, to: &bytes)
                for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
            }
        }
        return bytes
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    private static func readVarint(_ bytes: [UInt8], _ offset: inout Int) throws -> UInt64 {
        let start = offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            guard shift < 64 else { throw ProtobufWireError("varint at offset \(start) is longer than 10 bytes") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
        throw ProtobufWireError("varint at offset \(start) is truncated")
    }

    private static func readFixed(_ bytes: [UInt8], _ offset: inout Int, width: Int) throws -> UInt64 {
        guard bytes.count - offset >= width else {
            throw ProtobufWireError("\(width)-byte value at offset \(offset) is truncated")
        }
        var result: UInt64 = 0
        for index in 0..<width { result |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
        offset += width
        return result
    }
}
