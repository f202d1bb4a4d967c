import OrderedCollections

/// A strict RFC 8259 parser producing ``JSONValue`` with exact numbers and ordered keys.
/// Nesting is bounded (default ``defaultMaximumDepth``), so hostile input cannot exhaust the
/// stack; duplicate keys keep the last value.
struct JSONParser {
    static let defaultMaximumDepth = 512

    private let bytes: [UInt8]
    private let maximumDepth: Int
    private var index = 0
    private var depth = 0

    init(bytes: [UInt8], maximumDepth: Int = JSONParser.defaultMaximumDepth) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw error(.empty) }
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw error(.syntax(expected: "end of input")) }
        return value
    }

    private mutating func parseValue() throws(JSONError) -> JSONValue {
        guard index < bytes.count else { throw error(.syntax(expected: "a value")) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
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
        var members = OrderedDictionary<String, JSONValue>()
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else { throw error(.syntax(expected: "a string key")) }
            let key = try parseString()
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { throw error(.syntax(expected: "':'")) }
            index += 1
            skipWhitespace()
            members[key] = try parseValue()
            skipWhitespace()
            if peek(UInt8(ascii: ",")) { index += 1; continue }
            if peek(UInt8(ascii: "}")) { index += 1; break }
            throw error(.syntax(expected: "',' or '}'"))
        }
        depth -= 1
        return .object(members)
    }

    private mutating func parseArray() throws(JSONError) -> JSONValue {
        try enterContainer()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            if peek(UInt8(ascii: ",")) { index += 1; continue }
            if peek(UInt8(ascii: "]")) { index += 1; break }
            throw error(.syntax(expected: "',' or ']'"))
        }
        depth -= 1
        return .array(elements)
    }

    private mutating func enterContainer() throws(JSONError) {
        depth += 1
        if depth > maximumDepth { throw error(.tooDeep(limit: maximumDepth)) }
    }

    private mutating func parseString() throws(JSONError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let string = try decodeUTF8(start..<index)
                index += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error(.syntax(expected: "an escaped control character")) }
            index += 1
        }
        var scalars = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try decodeUTF8Bytes(scalars, at: start)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error(.syntax(expected: "an escape")) }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): scalars.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): scalars.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800...0xDBFF).contains(code), bytes.count >= index + 6,
                       bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
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
                    // Lone surrogates cannot be represented in a Swift String: U+FFFD.
                    let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                    scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw error(.syntax(expected: "a valid escape"))
                }
            default:
                if byte < 0x20 { throw error(.syntax(expected: "an escaped control character")) }
                scalars.append(byte)
                index += 1
            }
        }
        throw error(.syntax(expected: "'\"' closing the string"))
    }

    private mutating func parseHex4() throws(JSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error(.syntax(expected: "four hex digits")) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.syntax(expected: "a hex digit"))
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONError) -> JSONNumber {
        let start = index
        if peek(UInt8(ascii: "-")) { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error(.syntax(expected: "a digit")) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if peek(UInt8(ascii: ".")) {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error(.syntax(expected: "a digit after '.'")) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error(.syntax(expected: "an exponent digit")) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        return JSONNumber(validatedText: String(decoding: bytes[start..<index], as: UTF8.self))
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error(.syntax(expected: "\(literal)")) }
        let matches = literal.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        guard matches else { throw error(.syntax(expected: "\(literal)")) }
        index += count
    }

    private func decodeUTF8(_ range: Range<Int>) throws(JSONError) -> String {
        guard let string = bytes.withUnsafeBufferPointer({ String(validating: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) })
        else { throw errorAt(range.lowerBound, .invalidUTF8) }
        return string
    }

    private func decodeUTF8Bytes(_ utf8: [UInt8], at start: Int) throws(JSONError) -> String {
        guard let string = String(validating: utf8, as: UTF8.self) else { throw errorAt(start, .invalidUTF8) }
        return string
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private func peek(_ byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private func error(_ reason: JSONError.Reason) -> JSONError {
        errorAt(index, reason)
    }

    private func errorAt(_ offset: Int, _ reason: JSONError.Reason) -> JSONError {
        var line = 1
        var column = 1
        for byte in bytes[..<min(offset, bytes.count)] {
            if byte == 0x0A { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
        }
        return JSONError(reason: reason, offset: offset, line: line, column: column)
    }
}
