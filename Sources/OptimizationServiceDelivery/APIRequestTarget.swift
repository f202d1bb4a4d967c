/// What a trace may say about where an API request went: the server's host and port and the
/// URL's path as a template, with every identifier in it replaced by a placeholder
/// (`url.template`), never the query. A visitor's profile id, which Experience URLs carry, so
/// never reaches a span.
///
/// The segment after `organizations`, `spaces`, `environments` and `profiles` becomes
/// `{organization}`, `{space}`, `{environment}` and `{profileId}`; a segment that is a version
/// (`v2`) or one of the APIs' fixed words stays; any other segment becomes `{segment}`.
package struct APIRequestTarget: Sendable, Equatable {
    /// The host, without the port; nil for a URL without one.
    package var serverAddress: String?
    /// The port the URL names; nil when it names none.
    package var serverPort: Int?
    /// The path with placeholders, starting with `/`.
    package var urlTemplate: String

    /// The placeholder of the segment after each collection name.
    private static let placeholders = [
        "organizations": "{organization}", "spaces": "{space}", "environments": "{environment}", "profiles": "{profileId}",
    ]
    /// Segments kept as they are.
    private static let fixedWords: Set<Substring> = [
        "organizations", "spaces", "environments", "profiles", "events", "batch", "experience", "insights", "api",
    ]

    /// The target of `url` (`scheme://host[:port]/path[?query][#fragment]`).
    package init(url: String) {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        let authority = rest.prefix { $0 != "/" }
        let path = rest[authority.endIndex...]
        let hostAndPort = authority.split(separator: "@").last ?? authority
        if let colon = hostAndPort.lastIndex(of: ":"), !hostAndPort.hasSuffix("]") {
            serverAddress = hostAndPort[..<colon].isEmpty ? nil : String(hostAndPort[..<colon])
            serverPort = Int(hostAndPort[hostAndPort.index(after: colon)...])
        } else {
            serverAddress = hostAndPort.isEmpty ? nil : String(hostAndPort)
            serverPort = nil
        }
        var template = ""
        var placeholder: String?
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            template += "/"
            if let next = placeholder {
                template += next
                placeholder = nil
            } else if Self.fixedWords.contains(segment) || Self.isVersion(segment) {
                template += segment
                placeholder = Self.placeholders[String(segment)]
            } else {
                template += "{segment}"
            }
        }
        urlTemplate = template.isEmpty ? "/" : template
    }

    /// `v` followed by digits.
    private static func isVersion(_ segment: Substring) -> Bool {
        segment.count > 1 && segment.first == "v" && segment.dropFirst().allSatisfy(\.isASCII) && segment.dropFirst().allSatisfy(\.isNumber)
    }
}
