import Crypto

/// The form of a request Contentful signs for a webhook, and its signature: lower-case hex
/// HMAC-SHA256, keyed with the space's signing secret, of
/// `METHOD \n PATH \n HEADERS \n BODY`, where
/// - PATH is the request target with its query (the part between the first and a second `?`)
///   percent-encoded as a URI component, then the whole percent-encoded as a URI (so an existing
///   `%` becomes `%25`);
/// - HEADERS are the signed headers, always including `x-contentful-signed-headers` and
///   `x-contentful-timestamp`, as `name:value` with lower-case names and trimmed values, sorted
///   by name and joined with `;`; the value of `x-contentful-signed-headers` is the sorted names
///   joined with `,`, and that of `x-contentful-timestamp` the Unix time in milliseconds.
///
/// Shared by ``ContentfulWebhookVerifier`` and the test kit's signer.
package enum ContentfulWebhookCanonicalRequest {
    package static let signatureHeader = "x-contentful-signature"
    package static let timestampHeader = "x-contentful-timestamp"
    package static let signedHeadersHeader = "x-contentful-signed-headers"

    /// The bytes to sign and the value of `x-contentful-signed-headers`.
    /// - Parameters:
    ///   - headers: the signed headers other than the timestamp and the signed-headers list, by
    ///     normalized name (``normalizedName(_:)``), with trimmed values.
    ///   - timestamp: the Unix time in milliseconds.
    package static func make(
        method: String, path: String, headers: [String: String], timestamp: Int64, body: [UInt8]
    ) -> (bytes: [UInt8], signedHeaders: String) {
        var all = headers
        all[timestampHeader] = String(timestamp)
        all[signedHeadersHeader] = nil
        let names = (Array(all.keys) + [signedHeadersHeader]).sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
        let signedHeaders = names.joined(separator: ",")
        all[signedHeadersHeader] = signedHeaders
        let headerLine = names.map { "\($0):\(all[$0] ?? "")" }.joined(separator: ";")
        var bytes = Array("\(method)\n\(canonicalPath(path))\n\(headerLine)\n".utf8)
        bytes.append(contentsOf: body)
        return (bytes, signedHeaders)
    }

    /// The signature of `bytes` with `secret`: lower-case hex HMAC-SHA256 keyed with the
    /// secret's UTF-8 bytes.
    package static func signature(of bytes: [UInt8], secret: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: bytes, using: SymmetricKey(data: Array(secret.utf8)))
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in code.withUnsafeBytes({ Array($0) }) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A header name as compared and signed: lower case, without surrounding whitespace.
    package static func normalizedName(_ name: String) -> String {
        trimmed(name).lowercased()
    }

    /// `text` without leading and trailing whitespace.
    package static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }

    /// The request target as signed (see the type's description).
    package static func canonicalPath(_ target: String) -> String {
        let parts = target.split(separator: "?", omittingEmptySubsequences: false)
        let pathname = String(parts[0])
        let query = parts.count > 1 ? String(parts[1]) : ""
        let joined = query.isEmpty ? pathname : pathname + "?" + percentEncoded(query, keeping: componentCharacters)
        return percentEncoded(joined, keeping: uriCharacters)
    }

    /// Kept as is in a URI component: letters, digits and `-_.!~*'()`.
    private static let componentCharacters: Set<UInt8> = Set("-_.!~*'()".utf8)
    /// Kept as is in a whole URI: those of a component and `;,/?:@&=+$#`.
    private static let uriCharacters: Set<UInt8> = componentCharacters.union(";,/?:@&=+$#".utf8)

    private static func percentEncoded(_ text: String, keeping kept: Set<UInt8>) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                encoded.append(byte)
            case _ where kept.contains(byte):
                encoded.append(byte)
            default:
                encoded.append(contentsOf: [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }
}
