import OrderedCollections

/// A strict RFC 8259 parser producing ``JSONValue`` with exact numbers and ordered keys, reading
/// raw UTF-8 bytes in one pass.
///
/// Nesting is bounded (default ``defaultMaximumDepth``), so hostile input cannot exhaust the
/// stack; duplicate keys keep the first position and the last value. Strings must be valid UTF-8
/// (``JSONError/Reason/invalidUTF8``); a `\u` escape of a lone surrogate becomes U+FFFD, since a
/// Swift `String` cannot hold one. Errors carry the byte offset, line and column of the problem.
struct JSONParser {
    static let defaultMaximumDepth = 512

    private let bytes: [UInt8]
    private let maximumDepth: Int

    init(bytes: [UInt8], maximumDepth: Int = JSONParser.defaultMaximumDepth) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        let maximumDepth = maximumDepth
        return try bytes.withUnsafeBufferPointer { (buffer) throws(JSONError) -> JSONValue in
            try JSONParser.parse(buffer, maximumDepth: maximumDepth)
        }
    }

    /// Parses one JSON document that fills `buffer` (surrounding whitespace allowed).
    static func parse(_ buffer: UnsafeBufferPointer<UInt8>, maximumDepth: Int = defaultMaximumDepth) throws(JSONError) -> JSONValue {
        var reader = JSONByteReader(buffer, maximumDepth: maximumDepth)
        return try reader.parseDocument()
    }
}

/// The parser's state over one contiguous buffer. Every read is bounds-checked against `count`
/// by hand, so the loops run without the standard library's per-access checks.
private struct JSONByteReader: ~Copyable {
    private let bytes: JSONBytes
    private var base: UnsafePointer<UInt8>? { bytes.base }
    private var count: Int { bytes.count }
    private let maximumDepth: Int
    private var index = 0
    private var depth = 0
    /// Reused for strings with escapes.
    private var scratch: [UInt8] = []
    /// Members and elements of the containers being read, innermost last: each container takes
    /// its own range off the top when it closes, so reading allocates only the final storage.
    private var keyStack = MoveStack<String>()
    private var valueStack = MoveStack<JSONValue>()

    init(_ buffer: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        bytes = JSONBytes(buffer)
        self.maximumDepth = maximumDepth
    }

    @inline(__always)
    private func byte(at offset: Int) -> UInt8 {
        bytes[offset]
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        skipWhitespace()
        guard index < count else { throw error(.empty) }
        let value = try parseValue()
        skipWhitespace()
        guard index == count else { throw error(.syntax(expected: "end of input")) }
        return value
    }

    private mutating func parseValue() throws(JSONError) -> JSONValue {
        guard index < count else { throw error(.syntax(expected: "a value")) }
        switch byte(at: index) {
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error(.syntax(expected: "a value"))
        }
    }

    private mutating func parseObject() throws(JSONError) -> JSONValue {
        try enterContainer()
        index += 1
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            index += 1
            depth -= 1
            return .object([:])
        }
        let keyStart = keyStack.count
        let valueStart = valueStack.count
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else { throw error(.syntax(expected: "a string key")) }
            keyStack.push(try parseString())
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { throw error(.syntax(expected: "':'")) }
            index += 1
            skipWhitespace()
            valueStack.push(try parseValue())
            skipWhitespace()
            if peek(UInt8(ascii: ",")) { index += 1; continue }
            if peek(UInt8(ascii: "}")) { index += 1; break }
            throw error(.syntax(expected: "',' or '}'"))
        }
        depth -= 1
        let unique = keyStack.withElements(from: keyStart, Self.areUnique)
        let keys = keyStack.popArray(from: keyStart)
        let values = valueStack.popArray(from: valueStart)
        if unique {
            return .object(OrderedDictionary(uncheckedUniqueKeys: keys, values: values))
        }
        var merged = OrderedDictionary<String, JSONValue>()
        for (key, value) in zip(keys, values) { merged[key] = value }
        return .object(merged)
    }

    /// Small objects (the common case) compare pairwise; larger ones go through a set.
    private static func areUnique(_ keys: UnsafeBufferPointer<String>) -> Bool {
        if keys.count <= 12 {
            for first in keys.indices {
                for second in (first + 1)..<keys.count where keys[first] == keys[second] { return false }
            }
            return true
        }
        return Set(keys).count == keys.count
    }

    private mutating func parseArray() throws(JSONError) -> JSONValue {
        try enterContainer()
        index += 1
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            depth -= 1
            return .array([])
        }
        let start = valueStack.count
        while true {
            skipWhitespace()
            valueStack.push(try parseValue())
            skipWhitespace()
            if peek(UInt8(ascii: ",")) { index += 1; continue }
            if peek(UInt8(ascii: "]")) { index += 1; break }
            throw error(.syntax(expected: "',' or ']'"))
        }
        depth -= 1
        return .array(Array(valueStack.popArray(from: start)))
    }

    private mutating func enterContainer() throws(JSONError) {
        depth += 1
        if depth > maximumDepth { throw error(.tooDeep(limit: maximumDepth)) }
    }

    /// At the opening quote; returns the decoded string and leaves `index` after the closing one.
    private mutating func parseString() throws(JSONError) -> String {
        index += 1
        let start = index
        var combined: UInt8 = 0
        // Fast path: no escapes.
        while index < count {
            let current = byte(at: index)
            if current == UInt8(ascii: "\"") {
                let string = try makeString(start, index, isASCII: combined < 0x80)
                index += 1
                return string
            }
            if current == UInt8(ascii: "\\") { break }
            if current < 0x20 { throw error(.syntax(expected: "an escaped control character")) }
            combined |= current
            index += 1
        }
        guard index < count else { throw error(.syntax(expected: "'\"' closing the string")) }
        return try parseEscapedString(from: start)
    }

    private mutating func parseEscapedString(from start: Int) throws(JSONError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(start: base.unsafelyUnwrapped + start, count: index - start))
        while index < count {
            let current = byte(at: index)
            switch current {
            case UInt8(ascii: "\""):
                index += 1
                return try scratch.withUnsafeBufferPointer { (bytes) throws(JSONError) -> String in
                    guard UTF8Validation.isValid(bytes) else { throw errorAt(start, .invalidUTF8) }
                    return String(decoding: bytes, as: UTF8.self)
                }
            case UInt8(ascii: "\\"):
                index += 1
                guard index < count else { throw error(.syntax(expected: "an escape")) }
                let escape = byte(at: index)
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scratch.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): scratch.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape()
                default: throw error(.syntax(expected: "a valid escape"))
                }
            default:
                if current < 0x20 { throw error(.syntax(expected: "an escaped control character")) }
                scratch.append(current)
                index += 1
            }
        }
        throw error(.syntax(expected: "'\"' closing the string"))
    }

    /// After `\u`: appends the UTF-8 of the escaped scalar (a surrogate pair when one follows;
    /// U+FFFD for a lone surrogate).
    private mutating func appendUnicodeEscape() throws(JSONError) {
        var code = try parseHex4()
        if (0xD800...0xDBFF).contains(code), count >= index + 6,
           byte(at: index) == UInt8(ascii: "\\"), byte(at: index + 1) == UInt8(ascii: "u")
        {
            let save = index
            index += 2
            let low = try parseHex4()
            if (0xDC00...0xDFFF).contains(low) {
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            } else {
                index = save
            }
        }
        let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
        for unit in UTF8.encode(scalar).unsafelyUnwrapped { scratch.append(unit) }
    }

    private mutating func parseHex4() throws(JSONError) -> UInt32 {
        guard index + 4 <= count else { throw error(.syntax(expected: "four hex digits")) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = JSONBytes.hexValue(byte(at: index)) else { throw error(.syntax(expected: "a hex digit")) }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONError) -> JSONNumber {
        let start = index
        if let expected = bytes.skipNumber(&index) { throw error(.syntax(expected: expected)) }
        return JSONNumber(validatedText: asciiString(start, index))
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        guard bytes.skipLiteral(literal, &index) else { throw error(.syntax(expected: "\(literal)")) }
    }

    /// The bytes `start..<end` as a string: copied as is when known to be ASCII, else validated.
    private func makeString(_ start: Int, _ end: Int, isASCII: Bool) throws(JSONError) -> String {
        let slice = UnsafeBufferPointer(start: base.unsafelyUnwrapped + start, count: end - start)
        guard isASCII || UTF8Validation.isValid(slice) else { throw errorAt(start, .invalidUTF8) }
        return String(decoding: slice, as: UTF8.self)
    }

    /// Bytes already known to be ASCII (hence valid UTF-8).
    private func asciiString(_ start: Int, _ end: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: base.unsafelyUnwrapped + start, count: end - start), as: UTF8.self)
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        bytes.skipWhitespace(&index)
    }

    @inline(__always)
    private func peek(_ expected: UInt8) -> Bool {
        bytes.peek(index, expected)
    }

    private func error(_ reason: JSONError.Reason) -> JSONError {
        errorAt(index, reason)
    }

    private func errorAt(_ offset: Int, _ reason: JSONError.Reason) -> JSONError {
        var line = 1
        var column = 1
        for position in 0..<min(offset, count) {
            let current = byte(at: position)
            if current == 0x0A { line += 1; column = 1 } else if current & 0xC0 != 0x80 { column += 1 }
        }
        return JSONError(reason: reason, offset: offset, line: line, column: column)
    }
}
