import OptimizationJSON
import OrderedCollections

/// The bounds on the free-form text a request brings into the library (``RequestOptions``): a
/// visitor controls most of it (`User-Agent`, the URL), and it rides in every event of the
/// request, so in the Insights request that carries other visitors' events too. Every string is
/// cut to its bound in UTF-8 bytes, on a Unicode scalar boundary (never inside a scalar), after
/// its control characters (U+0000–U+001F, U+007F–U+009F: line breaks, escapes, NUL) are removed.
/// Text within its bound and free of control characters is kept as it is (no copy).
///
/// | text | bound (UTF-8 bytes) |
/// |---|---|
/// | `eventContext.userAgent` | ``userAgentBytes`` (512) |
/// | `eventContext.page.url`, `.path`, `.search` and every other string of `eventContext` | ``contextStringBytes`` (2,048 each) |
/// | each member name in `eventContext` | ``contextKeyBytes`` (256) |
/// | ``RequestOptions/locale`` | ``localeBytes`` (64) |
/// | ``RequestOptions/ip`` | ``ipBytes`` (64) |
/// | ``RequestOptions/requestId`` | ``requestIdBytes`` (128) |
///
/// Pure functions, safe from any thread.
package enum RequestTextBounds {
    /// `eventContext.userAgent`: 512 bytes (real browsers send under 300).
    package static let userAgentBytes = 512
    /// Every other string of `eventContext`, `page.url`, `page.path` and `page.search` included:
    /// 2,048 bytes each (the URL length most servers and CDNs accept by default).
    package static let contextStringBytes = 2_048
    /// Each member name of `eventContext`, at any depth: 256 bytes.
    package static let contextKeyBytes = 256
    /// ``RequestOptions/locale``: 64 bytes (a BCP 47 tag is at most 35 in practice).
    package static let localeBytes = 64
    /// ``RequestOptions/ip``: 64 bytes (an IPv6 address with a zone fits).
    package static let ipBytes = 64
    /// ``RequestOptions/requestId``: 128 bytes (it is log metadata).
    package static let requestIdBytes = 128

    /// `text` without control characters, cut to at most `maxBytes` UTF-8 bytes on a scalar
    /// boundary; `text` itself when it already is.
    package static func bounded(_ text: String, maxBytes: Int) -> String {
        guard needsBounding(text, maxBytes: maxBytes) else { return text }
        var result = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars where !isControl(scalar) {
            let width = UTF8.width(scalar)
            if bytes + width > maxBytes { break }
            bytes += width
            result.append(scalar)
        }
        return String(result)
    }

    /// ``bounded(_:maxBytes:)`` of an optional text.
    package static func bounded(_ text: String?, maxBytes: Int) -> String? {
        text.map { bounded($0, maxBytes: maxBytes) }
    }

    /// The event context with every string and member name bounded (see the type); the context
    /// itself when nothing needs it. A member whose bounded name equals an earlier member's is
    /// dropped (the earlier one wins).
    package static func boundedContext(_ context: OrderedDictionary<String, JSONValue>) -> OrderedDictionary<String, JSONValue> {
        guard contextNeedsBounding(context, topLevel: true) else { return context }
        return boundedMembers(context, topLevel: true)
    }

    // MARK: Checks (no allocation)

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func needsBounding(_ text: String, maxBytes: Int) -> Bool {
        if text.utf8.count > maxBytes { return true }
        // C0 controls and DEL are single bytes; C1 controls are 0xC2 0x80–0x9F.
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && (0x80...0x9F).contains(byte)) { return true }
            previous = byte
        }
        return false
    }

    private static func valueNeedsBounding(_ value: JSONValue, maxBytes: Int) -> Bool {
        switch value {
        case .string(let text): return needsBounding(text, maxBytes: maxBytes)
        case .array(let items): return items.contains { valueNeedsBounding($0, maxBytes: contextStringBytes) }
        case .object(let members): return contextNeedsBounding(members, topLevel: false)
        case .null, .bool, .number: return false
        }
    }

    private static func contextNeedsBounding(_ members: OrderedDictionary<String, JSONValue>, topLevel: Bool) -> Bool {
        for (key, value) in members {
            if needsBounding(key, maxBytes: contextKeyBytes) { return true }
            if valueNeedsBounding(value, maxBytes: stringBound(forKey: key, topLevel: topLevel)) { return true }
        }
        return false
    }

    private static func stringBound(forKey key: String, topLevel: Bool) -> Int {
        topLevel && key == "userAgent" ? userAgentBytes : contextStringBytes
    }

    // MARK: Bounding

    private static func boundedValue(_ value: JSONValue, maxBytes: Int) -> JSONValue {
        switch value {
        case .string(let text): return .string(bounded(text, maxBytes: maxBytes))
        case .array(let items): return .array(items.map { boundedValue($0, maxBytes: contextStringBytes) })
        case .object(let members): return .object(boundedMembers(members, topLevel: false))
        case .null, .bool, .number: return value
        }
    }

    private static func boundedMembers(_ members: OrderedDictionary<String, JSONValue>, topLevel: Bool) -> OrderedDictionary<String, JSONValue> {
        var result: OrderedDictionary<String, JSONValue> = [:]
        result.reserveCapacity(members.count)
        for (key, value) in members {
            let name = bounded(key, maxBytes: contextKeyBytes)
            guard result[name] == nil else { continue }
            result[name] = boundedValue(value, maxBytes: stringBound(forKey: key, topLevel: topLevel))
        }
        return result
    }
}
