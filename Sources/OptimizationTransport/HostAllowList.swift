import Foundation

/// The set of base URLs the host's transport may reach (the configured Experience and Insights
/// bases). A value type; safe to share between threads.
///
/// A URL is allowed when, for one base, it has the same scheme (`http`/`https`, case-insensitive),
/// the same host (case-insensitive), the same port (default 80/443 filled in) and its path starts
/// with the base path **as a whole segment**: the base path is normalised to end with `/`,
/// so base `http://h/experience` allows `http://h/experience/v2/…` (and
/// `http://h/experience` itself) but not `http://h/experience-evil/…`. Query and fragment are
/// ignored. URLs with user info, or with a `.`/`..` path segment or an encoded `/` or `\` in the
/// path (tricks to leave the prefix on the server), are refused.
public struct HostAllowList: Sendable, Equatable {
    /// One normalised base.
    public struct Base: Sendable, Equatable, CustomStringConvertible {
        /// Lower-cased `http` or `https`.
        public let scheme: String
        /// Lower-cased host, IPv6 brackets removed.
        public let host: String
        /// Explicit port, or 80/443 by scheme.
        public let port: Int
        /// Percent-encoded path, always ending with `/`.
        public let pathPrefix: String

        public var description: String {
            let shownHost = host.contains(":") ? "[\(host)]" : host
            return "\(scheme)://\(shownHost):\(port)\(pathPrefix)"
        }
    }

    /// The normalised bases, in the order given.
    public let bases: [Base]

    /// - Parameter baseURLs: absolute `http`/`https` URLs with a host (a trailing slash is
    ///   optional). Duplicates are allowed.
    /// - Throws: ``HTTPTransportError/invalidBaseURL(_:)`` for any other string.
    public init(baseURLs: [String]) throws(HTTPTransportError) {
        var bases: [Base] = []
        for text in baseURLs {
            guard let parts = Self.parse(text), parts.userInfoFree else { throw .invalidBaseURL(text) }
            var path = parts.path.isEmpty ? "/" : parts.path
            if !path.hasSuffix("/") { path += "/" }
            bases.append(Base(scheme: parts.scheme, host: parts.host, port: parts.port, pathPrefix: path))
        }
        self.bases = bases
    }

    /// True when `url` is inside one of the bases (see the type's documentation).
    public func allows(_ url: String) -> Bool {
        guard let parts = Self.parse(url), parts.userInfoFree, Self.pathIsPlain(parts.path) else { return false }
        let path = parts.path.isEmpty ? "/" : parts.path
        return bases.contains { base in
            base.scheme == parts.scheme && base.host == parts.host && base.port == parts.port
                && (path.hasPrefix(base.pathPrefix) || path + "/" == base.pathPrefix)
        }
    }

    /// Joins a base URL and a relative path the way the shared core does
    /// (`apiResponse.joinUrl`): trailing slashes of `base` and leading slashes of `path` are trimmed and exactly
    /// one `/` is put between them, so `join("http://h/experience", "v2/x")` and
    /// `join("http://h/experience/", "/v2/x")` both give `http://h/experience/v2/x`.
    public static func join(base: String, path: String) -> String {
        var trimmedBase = Substring(base)
        while trimmedBase.hasSuffix("/") { trimmedBase = trimmedBase.dropLast() }
        var trimmedPath = Substring(path)
        while trimmedPath.hasPrefix("/") { trimmedPath = trimmedPath.dropFirst() }
        return "\(trimmedBase)/\(trimmedPath)"
    }

    // MARK: Parsing (the same Foundation parsing AsyncHTTPClient uses to pick the connection)

    private struct Parts {
        var scheme: String
        var host: String
        var port: Int
        var path: String
        var userInfoFree: Bool
    }

    private static func parse(_ text: String) -> Parts? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            var host = url.host, !host.isEmpty,
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let userInfoFree = components.percentEncodedUser == nil && components.percentEncodedPassword == nil
        return Parts(scheme: scheme, host: host.lowercased(), port: port, path: components.percentEncodedPath, userInfoFree: userInfoFree)
    }

    private static func pathIsPlain(_ path: String) -> Bool {
        var segment: [UInt8] = []
        segment.reserveCapacity(8)
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") {
                if !segmentIsPlain(segment) { return false }
                segment.removeAll(keepingCapacity: true)
            } else {
                segment.append(byte)
            }
        }
        return segmentIsPlain(segment)
    }

    /// No backslash, no encoded `/` or `\`, and not `.` or `..` once percent-decoded (a segment
    /// whose escapes do not decode counts as its raw bytes, as `removingPercentEncoding`'s nil).
    private static func segmentIsPlain(_ segment: [UInt8]) -> Bool {
        var decoded: [UInt8] = []
        var decodes = true
        var index = 0
        while index < segment.count {
            let byte = segment[index]
            if byte == UInt8(ascii: "\\") { return false }
            if byte == UInt8(ascii: "%") {
                if index + 2 < segment.count, let high = hexValue(segment[index + 1]), let low = hexValue(segment[index + 2]) {
                    let value = high << 4 | low
                    if value == 0x2F || value == 0x5C { return false }
                    decoded.append(value)
                    index += 3
                    continue
                }
                decodes = false
            }
            decoded.append(byte)
            index += 1
        }
        let name = decodes ? decoded : segment
        return name != [UInt8(ascii: ".")] && name != [UInt8(ascii: "."), UInt8(ascii: ".")]
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
