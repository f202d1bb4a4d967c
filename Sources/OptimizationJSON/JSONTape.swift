/// A validated JSON document kept as its UTF-8 text plus a flat index of its values (a "tape"),
/// so that a reader can find members and elements without building a ``JSONValue`` tree, and
/// build one only for the subtrees it needs (``value(of:)``).
///
/// ``scan(_:maximumDepth:)`` accepts exactly the documents ``JSONParser`` accepts (the same
/// grammar and depth bound; a `String` is valid UTF-8 already). It does not explain failures: a
/// caller that needs the error runs the parser, which names it. Member lookups follow the parser's rule for duplicate
/// keys (the last value wins) and compare keys as Swift strings (canonical equivalence), so a
/// lookup here finds what a subscript of the parsed tree finds.
///
/// Immutable and `Sendable`. Documents of 4 GiB or more are not indexed (`scan` returns nil).
package struct JSONTape: Sendable {
    /// The record of one value (a node of the document; nodes are named by their index in the
    /// tape). Strings span their quotes. A container's first child (if any) follows it at
    /// the next index; `next` is the index after its whole subtree. Object members are a key
    /// node followed by its value node.
    struct Slot: Sendable {
        var start: UInt32
        var end: UInt32
        var next: UInt32
        var kind: JSONKind
        /// Strings only: ASCII without escapes, so its bytes between the quotes are its text.
        var isPlain: Bool
        /// Containers only: nested too deeply for a shallow scan to record its children.
        var isCollapsed: Bool
    }

    /// The document's text, UTF-8 contiguous; node offsets index its bytes.
    package let text: String
    private let nodes: ContiguousArray<Slot>

    /// The index of the document's top-level value.
    package static let rootNode = 0

    /// Indexes `text` (which must not start with a byte order mark); nil when it is not a JSON
    /// document ``JSONParser`` would accept with the same `maximumDepth`.
    ///
    /// With a `recordedDepth`, the whole text is still validated, but only values inside at most
    /// that many containers are indexed (0: the top-level value alone; 1: also its members or
    /// elements; …): a container at the last recorded depth has no children on the tape, and is
    /// read with ``text(of:)`` or ``value(of:)`` only (``isCollapsed(_:)``). A shallow scan of a
    /// large document records a handful of nodes.
    package static func scan(_ text: String, maximumDepth: Int = JSONParser.defaultMaximumDepth, recordedDepth: Int = .max) -> JSONTape? {
        var contiguous = text
        contiguous.makeContiguousUTF8()
        let nodes = contiguous.utf8.withContiguousStorageIfAvailable { buffer -> ContiguousArray<Slot>? in
            guard buffer.count < Int(UInt32.max) else { return nil }
            var scanner = JSONTapeScanner(buffer, maximumDepth: maximumDepth, recordedDepth: recordedDepth)
            return scanner.scanDocument()
        } ?? nil
        guard let nodes else { return nil }
        return JSONTape(text: contiguous, nodes: nodes)
    }

    /// Indexes UTF-8 bytes as ``JSONValue/init(jsonData:maximumDepth:)`` reads them (a leading
    /// byte order mark skipped, bytes that are not UTF-8 refused): nil exactly when that
    /// initializer throws. The tape's ``text`` is a copy of the bytes (without the mark).
    package static func scan(
        jsonData bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int = JSONParser.defaultMaximumDepth, recordedDepth: Int = .max
    ) -> JSONTape? {
        var bytes = bytes
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            bytes = UnsafeBufferPointer(rebasing: bytes[3...])
        }
        // The parser refuses bytes that are not UTF-8 inside strings, and any byte outside ASCII
        // elsewhere: a document it accepts is UTF-8 throughout, and the scan needs one.
        guard UTF8Validation.isValid(bytes) else { return nil }
        return scan(String(decoding: bytes, as: UTF8.self), maximumDepth: maximumDepth, recordedDepth: recordedDepth)
    }

    package func kind(of node: Int) -> JSONKind { nodes[node].kind }

    /// Whether the container at `node` was scanned below the recorded depth: its members or
    /// elements are not on the tape (``member(_:of:)``, ``element(_:of:)`` and
    /// ``elements(of:)`` must not be asked of it).
    package func isCollapsed(_ node: Int) -> Bool { nodes[node].isCollapsed }

    /// The value of the member `key` of the object at `node` (the last one, as the parser keeps
    /// the last value of a repeated key); nil when `node` is not an object or has no such key.
    package func member(_ key: String, of node: Int) -> Int? {
        guard nodes[node].kind == .object else { return nil }
        assert(!nodes[node].isCollapsed, "the members of a collapsed object are not on the tape")
        return withBytes { bytes in
            var found: Int?
            var child = node + 1
            let end = Int(nodes[node].next)
            while child < end {
                if stringEquals(child, key, bytes) { found = child + 1 }
                child = Int(nodes[child + 1].next)
            }
            return found
        }
    }

    /// The element at `index` of the array at `node`; nil when not an array or out of range.
    package func element(_ index: Int, of node: Int) -> Int? {
        guard nodes[node].kind == .array, index >= 0 else { return nil }
        assert(!nodes[node].isCollapsed, "the elements of a collapsed array are not on the tape")
        var child = node + 1
        let end = Int(nodes[node].next)
        var position = 0
        while child < end {
            if position == index { return child }
            child = Int(nodes[child].next)
            position += 1
        }
        return nil
    }

    /// The elements of the array at `node`, in order; nil when it is not an array.
    package func elements(of node: Int) -> [Int]? {
        guard nodes[node].kind == .array else { return nil }
        assert(!nodes[node].isCollapsed, "the elements of a collapsed array are not on the tape")
        var result: [Int] = []
        var child = node + 1
        let end = Int(nodes[node].next)
        while child < end {
            result.append(child)
            child = Int(nodes[child].next)
        }
        return result
    }

    /// The text of the string at `node`, decoded as the parser decodes it; nil for other kinds.
    package func string(at node: Int) -> String? {
        guard nodes[node].kind == .string else { return nil }
        if nodes[node].isPlain {
            return withBytes { bytes in
                String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(nodes[node].start) + 1..<Int(nodes[node].end) - 1]), as: UTF8.self)
            }
        }
        return value(of: node).stringValue
    }

    /// The value of the boolean at `node`; nil for other kinds.
    package func bool(at node: Int) -> Bool? {
        guard nodes[node].kind == .bool else { return nil }
        return withBytes { $0[Int(nodes[node].start)] == UInt8(ascii: "t") }
    }

    /// The exact text of the value at `node` (a JSON document of its own), without parsing it.
    package func text(of node: Int) -> String {
        withBytes { bytes in
            String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(nodes[node].start)..<Int(nodes[node].end)]), as: UTF8.self)
        }
    }

    /// The subtree at `node` as a ``JSONValue``, built by the parser from the node's bytes (which
    /// form a JSON document of their own).
    package func value(of node: Int) -> JSONValue {
        withBytes { bytes in
            let slice = UnsafeBufferPointer(rebasing: bytes[Int(nodes[node].start)..<Int(nodes[node].end)])
            do {
                return try JSONParser.parse(slice)
            } catch {
                // Unreachable: the scan accepted these bytes (the fuzzers check the two agree).
                assertionFailure("a scanned subtree did not parse: \(error)")
                return .null
            }
        }
    }

    private func stringEquals(_ node: Int, _ expected: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let current = nodes[node]
        guard current.kind == .string else { return false }
        var expected = expected
        let plainResult: Bool? = expected.withUTF8 { wanted in
            // Two ASCII strings are equal exactly when their bytes are; anything else compares
            // as Swift strings (canonical equivalence), as the parsed tree's keys do.
            guard current.isPlain, wanted.allSatisfy({ $0 < 0x80 }) else { return nil }
            let start = Int(current.start) + 1
            guard wanted.count == Int(current.end) - 1 - start else { return false }
            for offset in 0..<wanted.count where wanted[offset] != bytes[start + offset] { return false }
            return true
        }
        return plainResult ?? (string(at: node) == expected)
    }

    private func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }
}
