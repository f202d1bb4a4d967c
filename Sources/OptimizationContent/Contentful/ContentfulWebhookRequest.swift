/// One HTTP request as received by a Contentful webhook route, for ``ContentfulWebhookVerifier``:
/// what the signature covers, as the HTTP server delivered it.
public struct ContentfulWebhookRequest: Sendable {
    /// The HTTP method, as received (for example `POST`).
    public var method: String
    /// The request target as received: the path and, when there is one, `?` and the query.
    public var path: String
    /// Every header of the request, in any order; names are compared without regard to case.
    public var headers: [(name: String, value: String)]
    /// The body, byte for byte as received.
    public var body: [UInt8]

    /// A request; each parameter sets the property of the same name.
    public init(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// The value of header `name` (any case), with leading and trailing whitespace removed; the
    /// values of a repeated header are joined with `, `. Nil when the request has no such header.
    public func headerValue(named name: String) -> String? {
        let wanted = ContentfulWebhookCanonicalRequest.normalizedName(name)
        var found: [String] = []
        for header in headers where ContentfulWebhookCanonicalRequest.normalizedName(header.name) == wanted {
            found.append(ContentfulWebhookCanonicalRequest.trimmed(header.value))
        }
        return found.isEmpty ? nil : found.joined(separator: ", ")
    }
}
