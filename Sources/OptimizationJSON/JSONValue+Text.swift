import Foundation

extension JSONValue {
    /// Parses UTF-8 JSON. A leading UTF-8 byte order mark is ignored.
    /// - Throws: ``JSONError`` with the line and column of the problem.
    public init(jsonData data: some Collection<UInt8>, maximumDepth: Int = 512) throws(JSONError) {
        if let parsed = try Self.parseContiguous(data, maximumDepth: maximumDepth) {
            self = parsed
        } else {
            let bytes = Array(data)
            self = try Self.parseContiguous(bytes, maximumDepth: maximumDepth)!
        }
    }

    /// Parses JSON text (read in place from the string's UTF-8 storage when it has one).
    public init(jsonText text: String, maximumDepth: Int = 512) throws(JSONError) {
        try self.init(jsonData: text.utf8, maximumDepth: maximumDepth)
    }

    /// Parses `data` in place when its bytes are contiguous (BOM skipped); nil when they are not.
    static func parseContiguous(_ data: some Collection<UInt8>, maximumDepth: Int) throws(JSONError) -> JSONValue? {
        let result: Result<JSONValue, JSONError>? = data.withContiguousStorageIfAvailable { buffer in
            var bytes = buffer
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
                bytes = UnsafeBufferPointer(rebasing: bytes[3...])
            }
            return Result { () throws(JSONError) -> JSONValue in try JSONParser.parse(bytes, maximumDepth: maximumDepth) }
        }
        return try result?.get()
    }

    /// Compact JSON text. Strings are escaped as JSON requires (U+2028/U+2029 are escaped too, so
    /// the text is also safe inside JavaScript source); numbers are written exactly as held.
    /// - Throws: ``JSONError`` when nested deeper than `maximumDepth` (values built in code can be
    ///   arbitrarily deep; parsed ones are already bounded).
    public func jsonText(maximumDepth: Int = 512) throws(JSONError) -> String {
        var output = ""
        output.reserveCapacity(256)
        try JSONValue.write(self, to: &output, depth: 0, maximumDepth: maximumDepth, indent: nil)
        return output
    }

    /// Human-friendly JSON text with two-space indentation, keys in their stored order.
    public func prettyJSONText(maximumDepth: Int = 512) throws(JSONError) -> String {
        var output = ""
        try JSONValue.write(self, to: &output, depth: 0, maximumDepth: maximumDepth, indent: "")
        return output
    }

    /// UTF-8 bytes of ``jsonText(maximumDepth:)``.
    public func jsonData(maximumDepth: Int = 512) throws(JSONError) -> Data {
        Data(try jsonText(maximumDepth: maximumDepth).utf8)
    }

    private static func write(
        _ value: JSONValue, to output: inout String, depth: Int, maximumDepth: Int, indent: String?
    ) throws(JSONError) {
        switch value {
        case .null: output += "null"
        case .bool(let bool): output += bool ? "true" : "false"
        case .number(let number): output += number.text
        case .string(let string): writeString(string, to: &output)
        case .array(let elements):
            guard depth < maximumDepth else { throw JSONError(reason: .tooDeep(limit: maximumDepth), offset: 0, line: 0, column: 0) }
            if elements.isEmpty { output += "[]"; return }
            output += "["
            let inner = indent.map { $0 + "  " }
            for (position, element) in elements.enumerated() {
                if position > 0 { output += "," }
                if let inner { output += "\n" + inner }
                try write(element, to: &output, depth: depth + 1, maximumDepth: maximumDepth, indent: inner)
            }
            if let indent { output += "\n" + indent }
            output += "]"
        case .object(let members):
            guard depth < maximumDepth else { throw JSONError(reason: .tooDeep(limit: maximumDepth), offset: 0, line: 0, column: 0) }
            if members.isEmpty { output += "{}"; return }
            output += "{"
            let inner = indent.map { $0 + "  " }
            var first = true
            for (key, member) in members {
                if !first { output += "," }
                first = false
                if let inner { output += "\n" + inner }
                writeString(key, to: &output)
                output += indent == nil ? ":" : ": "
                try write(member, to: &output, depth: depth + 1, maximumDepth: maximumDepth, indent: inner)
            }
            if let indent { output += "\n" + indent }
            output += "}"
        }
    }

    /// Appends `string` as a JSON string literal (quoted and escaped as ``jsonText(maximumDepth:)``
    /// writes it).
    package static func appendStringLiteral(_ string: String, to output: inout String) {
        writeString(string, to: &output)
    }

    private static func writeString(_ string: String, to output: inout String) {
        output += "\""
        if !mayNeedEscaping(string) {
            output += string
            output += "\""
            return
        }
        var pending = string.unicodeScalars.startIndex
        let scalars = string.unicodeScalars
        var position = scalars.startIndex
        while position < scalars.endIndex {
            let scalar = scalars[position]
            let escape: String?
            switch scalar {
            case "\"": escape = "\\\""
            case "\\": escape = "\\\\"
            case "\n": escape = "\\n"
            case "\r": escape = "\\r"
            case "\t": escape = "\\t"
            case "\u{2028}": escape = "\\u2028"
            case "\u{2029}": escape = "\\u2029"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    escape = "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    escape = nil
                }
            }
            if let escape {
                output += string[pending..<position]
                output += escape
                pending = scalars.index(after: position)
            }
            position = scalars.index(after: position)
        }
        // Appended as a `Substring`: `output.unicodeScalars.append(contentsOf:)` rebuilt the whole
        // output for every string (quadratic: 11 ms for a 60 KB document).
        output += string[pending..<scalars.endIndex]
        output += "\""
    }

    /// False when no UTF-8 byte of `string` can start something ``writeString(_:to:)`` escapes:
    /// a control character, `"`, `\`, or 0xE2 (the lead byte of U+2028 and U+2029). Most keys,
    /// ids and values are then appended in one piece.
    private static func mayNeedEscaping(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { bytes in
            bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0xE2 }
        }
    }
}
