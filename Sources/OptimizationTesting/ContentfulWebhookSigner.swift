import OptimizationContent

/// Signs webhook requests as Contentful does, for testing a route that checks them with
/// `ContentfulWebhookVerifier`: adds `x-contentful-timestamp`, `x-contentful-signed-headers`
/// (every header of the request, and those two) and `x-contentful-signature`.
///
/// ```swift
/// let signer = try ContentfulWebhookSigner(secret: String(repeating: "s", count: 64))
/// let request = signer.signed(
///     ContentfulWebhookRequest(method: "POST", path: "/webhooks/contentful",
///                              headers: [("content-type", "application/vnd.contentful.management.v1+json")],
///                              body: Array(payload.utf8)),
///     timestamp: Int64(clock.now()))
/// // send request.method, request.path, request.headers and request.body to the service
/// ```
///
/// **Threading.** An immutable `Sendable` value.
public struct ContentfulWebhookSigner: Sendable {
    private let secret: String

    /// A signer with a space's webhook signing secret.
    /// - Parameter secret: exactly 64 characters (UTF-16 code units), as for the verifier.
    /// - Throws: `ContentfulWebhookError.invalidSecret` otherwise.
    public init(secret: String) throws(ContentfulWebhookError) {
        guard secret.utf16.count == 64 else { throw .invalidSecret }
        self.secret = secret
    }

    /// `request` with the three signature headers added (replacing any it had), signed at
    /// `timestamp`: Unix milliseconds, normally the clock time of the service under test. Every
    /// other header of `request` is signed; a repeated header is signed as its values joined with
    /// `, `.
    public func signed(_ request: ContentfulWebhookRequest, timestamp: Int64) -> ContentfulWebhookRequest {
        typealias Canonical = ContentfulWebhookCanonicalRequest
        let generated: Set<String> = [Canonical.signatureHeader, Canonical.timestampHeader, Canonical.signedHeadersHeader]
        let kept = request.headers.filter { !generated.contains(Canonical.normalizedName($0.name)) }
        var byName: [String: String] = [:]
        for header in kept {
            let name = Canonical.normalizedName(header.name)
            let value = Canonical.trimmed(header.value)
            byName[name] = byName[name].map { "\($0), \(value)" } ?? value
        }
        let canonical = Canonical.make(method: request.method, path: request.path, headers: byName, timestamp: timestamp, body: request.body)
        var signed = request
        signed.headers = kept + [
            (name: Canonical.timestampHeader, value: String(timestamp)),
            (name: Canonical.signedHeadersHeader, value: canonical.signedHeaders),
            (name: Canonical.signatureHeader, value: Canonical.signature(of: canonical.bytes, secret: secret)),
        ]
        return signed
    }
}
