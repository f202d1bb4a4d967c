/// Builds a ``JSONTape``'s nodes in one validating pass over the UTF-8 bytes of a Swift
/// `String`, accepting exactly what ``JSONParser`` accepts (RFC 8259, the same depth bound;
/// lexical rules shared through ``JSONBytes``) but building no values: strings and numbers are
/// recorded as byte ranges. The bytes are valid UTF-8 (a `String`'s always are), so strings are
/// not validated again. Stops at the first problem and returns nil; the parser explains it.
///
/// String bodies, most of a Contentful entry's bytes, are skipped eight bytes at a time.
/// Values nested in more than `recordedDepth` containers are validated but not recorded: a
/// container at that depth is recorded without children (see ``JSONTape/scan(_:maximumDepth:recordedDepth:)``).
/// Not copyable; one scanner, one thread.
struct JSONTapeScanner: ~Copyable {
    private let bytes: JSONBytes
    private var base: UnsafePointer<UInt8>? { bytes.base }
    private var count: Int { bytes.count }
    private let maximumDepth: Int
    private let recordedDepth: Int
    private var index = 0
    private var depth = 0
    private var nodes = ContiguousArray<JSONTape.Slot>()

    init(_ buffer: UnsafeBufferPointer<UInt8>, maximumDepth: Int, recordedDepth: Int = .max) {
        bytes = JSONBytes(buffer)
        self.maximumDepth = maximumDepth
        self.recordedDepth = max(0, recordedDepth)
        // A Contentful entry has about one value per 12 bytes; growth covers denser documents
        // (and large ones: a long string must not reserve room for values it does not have). A
        // shallow scan records a few values only.
        nodes.reserveCapacity(recordedDepth < 4 ? 16 : min(count / 8 + 8, 4_096))
    }

    /// The nodes of the document filling the buffer (whitespace around it allowed), or nil.
    mutating func scanDocument() -> ContiguousArray<JSONTape.Slot>? {
        skipWhitespace()
        guard index < count, scanValue() else { return nil }
        skipWhitespace()
        guard index == count else { return nil }
        return nodes
    }

    @inline(__always)
    private func byte(at offset: Int) -> UInt8 {
        bytes[offset]
    }

    private mutating func scanValue() -> Bool {
        guard index < count else { return false }
        let start = index
        switch byte(at: index) {
        case UInt8(ascii: "\""): return scanString()
        case UInt8(ascii: "{"): return scanObject()
        case UInt8(ascii: "["): return scanArray()
        case UInt8(ascii: "t"): return scanLiteral("true", .bool, from: start)
        case UInt8(ascii: "f"): return scanLiteral("false", .bool, from: start)
        case UInt8(ascii: "n"): return scanLiteral("null", .null, from: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard bytes.skipNumber(&index) == nil else { return false }
            append(.number, from: start)
            return true
        default: return false
        }
    }

    @inline(__always)
    private mutating func append(_ kind: JSONKind, from start: Int, isPlain: Bool = false) {
        guard depth <= recordedDepth else { return }
        let next = UInt32(truncatingIfNeeded: nodes.count + 1)
        nodes.append(JSONTape.Slot(
            start: UInt32(truncatingIfNeeded: start), end: UInt32(truncatingIfNeeded: index), next: next, kind: kind, isPlain: isPlain,
            isCollapsed: false))
    }

    /// Records a container's node before its children; `close` completes it. Nil when nested
    /// too deeply; -1 for a container deeper than `recordedDepth` (not recorded).
    private mutating func open(_ kind: JSONKind) -> Int? {
        depth += 1
        guard depth <= maximumDepth else { return nil }
        index += 1
        // `depth - 1` containers enclose this one.
        guard depth - 1 <= recordedDepth else { return -1 }
        nodes.append(JSONTape.Slot(
            start: UInt32(truncatingIfNeeded: index - 1), end: 0, next: 0, kind: kind, isPlain: false, isCollapsed: depth > recordedDepth))
        return nodes.count - 1
    }

    private mutating func close(_ node: Int) {
        depth -= 1
        guard node >= 0 else { return }
        nodes[node].end = UInt32(truncatingIfNeeded: index)
        nodes[node].next = UInt32(truncatingIfNeeded: nodes.count)
    }

    private mutating func scanObject() -> Bool {
        guard let node = open(.object) else { return false }
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            index += 1
            close(node)
            return true
        }
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")), scanString() else { return false }
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { return false }
            index += 1
            skipWhitespace()
            guard scanValue() else { return false }
            skipWhitespace()
            if peek(UInt8(ascii: ",")) { index += 1; continue }
            if peek(UInt8(ascii: "}")) { index += 1; break }
            return false
        }
        close(node)
        return true
    }

    private mutating func scanArray() -> Bool {
        guard let node = open(.array) else { return false }
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            close(node)
            return true
        }
        while true {
            skipWhitespace()
            guard scanValue() else { return false }
            skipWhitespace()
            if peek(UInt8(ascii: ",")) { index += 1; continue }
            if peek(UInt8(ascii: "]")) { index += 1; break }
            return false
        }
        close(node)
        return true
    }

    /// At the opening quote: records the string and leaves `index` after the closing quote.
    private mutating func scanString() -> Bool {
        let start = index
        index += 1
        var highBits: UInt64 = 0
        var hasEscapes = false
        while true {
            // Eight bytes at a time while none is a quote, a backslash or a control character;
            // in the word that has one, straight to the first such byte.
            while index + 8 <= count {
                let word = UInt64(littleEndian: UnsafeRawPointer(base.unsafelyUnwrapped + index).loadUnaligned(as: UInt64.self))
                let attention = Self.attentionBits(word)
                if attention != 0 {
                    // The lowest flag is exact; the bytes below it are ordinary.
                    let ordinary = attention.trailingZeroBitCount / 8
                    highBits |= word & ((1 << (8 * UInt64(ordinary))) &- 1)
                    index += ordinary
                    break
                }
                highBits |= word
                index += 8
            }
            guard index < count else { return false }
            let current = byte(at: index)
            if current == UInt8(ascii: "\"") { break }
            if current == UInt8(ascii: "\\") {
                guard scanEscape() else { return false }
                hasEscapes = true
                continue
            }
            if current < 0x20 { return false }
            highBits |= UInt64(current)
            index += 1
        }
        let isASCII = highBits & 0x8080_8080_8080_8080 == 0
        index += 1
        append(.string, from: start, isPlain: isASCII && !hasEscapes)
        return true
    }

    /// The high bits of the bytes of `word` (first byte lowest) that may be a `"`, a `\` or a
    /// byte below 0x20: zero when none is (no false negatives), and the lowest bit set is that
    /// of the first such byte (a flag above a true one can be false: a borrow runs up from it).
    @inline(__always)
    private static func attentionBits(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let hasQuote = (quotes &- ones) & ~quotes
        let hasBackslash = (backslashes &- ones) & ~backslashes
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl) & highs
    }

    /// At a backslash inside a string: one valid escape, `index` left after it.
    private mutating func scanEscape() -> Bool {
        index += 1
        guard index < count else { return false }
        switch byte(at: index) {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 1
            return true
        case UInt8(ascii: "u"):
            index += 1
            guard index + 4 <= count else { return false }
            for _ in 0..<4 {
                guard JSONBytes.hexValue(byte(at: index)) != nil else { return false }
                index += 1
            }
            return true
        default:
            return false
        }
    }

    private mutating func scanLiteral(_ literal: StaticString, _ kind: JSONKind, from start: Int) -> Bool {
        guard bytes.skipLiteral(literal, &index) else { return false }
        append(kind, from: start)
        return true
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        bytes.skipWhitespace(&index)
    }

    @inline(__always)
    private func peek(_ expected: UInt8) -> Bool {
        bytes.peek(index, expected)
    }
}
