import OptimizationContent
import OptimizationTesting
import OptimizationTestSupport
import Testing

@Suite("ContentfulWebhookVerifier")
struct ContentfulWebhookVerifierTests {
    // Contentful's published example of a signed webhook request.
    static let secret = String(repeating: "a", count: 32) + String(repeating: "b", count: 32)
    static let timestamp: Int64 = 1_767_225_600_000
    static let signedAt = Double(timestamp)
    static let body = Array(#"{"sys":{"id":"5KsDBWseXY6QegucYAoacS","type":"Entry"},"fields":{"title":{"en-US":"Hello, World!"}}}"#.utf8)
    static let expectedSignature = "8dec81505760a10b542fbc36d3aa0a772b11f759eca7b2351daaf5bba8c7c6f1"
    static let published = ContentfulWebhookRequest(
        method: "POST", path: "/trigger/SW5zdGFuY2VGbG93Q29uZmlnOjE=",
        headers: [
            ("content-type", "application/vnd.contentful.management.v1+json"),
            ("x-contentful-topic", "ContentManagement.Entry.publish"),
            ("x-contentful-signed-headers", "content-type,x-contentful-signed-headers,x-contentful-timestamp,x-contentful-topic"),
            ("x-contentful-timestamp", "1767225600000"),
            ("x-contentful-signature", expectedSignature),
        ],
        body: body)

    private let verifier: ContentfulWebhookVerifier

    init() throws {
        verifier = try ContentfulWebhookVerifier(secret: Self.secret)
    }

    private func verify(_ request: ContentfulWebhookRequest, now: Double = Self.signedAt + 1000) throws(ContentfulWebhookError) {
        try verifier.verify(request, now: now)
    }

    private static func changing(_ name: String, to value: String?, in request: ContentfulWebhookRequest = published) -> ContentfulWebhookRequest {
        var changed = request
        changed.headers = request.headers.filter { $0.name.lowercased() != name }
        if let value { changed.headers.append((name: name, value: value)) }
        return changed
    }

    @Test func thePublishedExampleVerifiesAndTheSignerReproducesIt() throws {
        try verify(Self.published)
        let signer = try ContentfulWebhookSigner(secret: Self.secret)
        let unsigned = ContentfulWebhookRequest(
            method: "POST", path: Self.published.path,
            headers: [("content-type", "application/vnd.contentful.management.v1+json"), ("x-contentful-topic", "ContentManagement.Entry.publish")],
            body: Self.body)
        let signed = signer.signed(unsigned, timestamp: Self.timestamp)
        #expect(signed.headerValue(named: "X-Contentful-Signature") == Self.expectedSignature)
        #expect(signed.headerValue(named: "x-contentful-signed-headers") == Self.published.headerValue(named: "x-contentful-signed-headers"))
        try verify(signed)
    }

    @Test func headerNamesAnyCaseAndValuesWithSurroundingWhitespaceVerify() throws {
        var request = Self.published
        request.headers = request.headers.map { (name: $0.name.uppercased(), value: "  \($0.value)\t") }
        try verify(request)
        // A header that is not signed may change.
        try verify(Self.changing("user-agent", to: "anything"))
    }

    @Test func aChangedMethodPathQueryBodyOrSignedHeaderIsRefused() throws {
        var request = Self.published
        request.method = "PUT"
        #expect(throws: ContentfulWebhookError.signatureMismatch) { try verify(request) }
        request = Self.published
        request.path = "/trigger/other"
        #expect(throws: ContentfulWebhookError.signatureMismatch) { try verify(request) }
        request.path = Self.published.path + "?replay=1"
        #expect(throws: ContentfulWebhookError.signatureMismatch) { try verify(request) }
        request = Self.published
        request.body[request.body.count - 3] = UInt8(ascii: "?")
        #expect(throws: ContentfulWebhookError.signatureMismatch) { try verify(request) }
        request = Self.changing("x-contentful-topic", to: "ContentManagement.Entry.delete")
        #expect(throws: ContentfulWebhookError.signatureMismatch) { try verify(request) }
        let otherSecret = try ContentfulWebhookVerifier(secret: String(repeating: "c", count: 64))
        #expect(throws: ContentfulWebhookError.signatureMismatch) { try otherSecret.verify(Self.published, now: Self.signedAt) }
        for forged in ["", "8dec", String(repeating: "z", count: 64), Self.expectedSignature + "00"] {
            #expect(throws: ContentfulWebhookError.signatureMismatch) { try verify(Self.changing("x-contentful-signature", to: forged)) }
        }
    }

    @Test func missingPartsAreTypedErrors() {
        #expect(throws: ContentfulWebhookError.missingSignature) { try verify(Self.changing("x-contentful-signature", to: nil)) }
        #expect(throws: ContentfulWebhookError.missingTimestamp) { try verify(Self.changing("x-contentful-timestamp", to: nil)) }
        #expect(throws: ContentfulWebhookError.missingSignedHeaders) { try verify(Self.changing("x-contentful-signed-headers", to: nil)) }
        #expect(throws: ContentfulWebhookError.missingSignedHeader("x-contentful-topic")) {
            try verify(Self.changing("x-contentful-topic", to: nil))
        }
        for bad in ["", "soon", "-1767225600000", "1767225600000.5", "12345678901234567"] {
            #expect(throws: ContentfulWebhookError.invalidTimestamp) { try verify(Self.changing("x-contentful-timestamp", to: bad)) }
        }
    }

    @Test func aTimestampOutsideTheTimeToLiveIsRefused() throws {
        try verify(Self.published, now: Self.signedAt + 29_999)
        #expect(throws: ContentfulWebhookError.expired) { try verify(Self.published, now: Self.signedAt + 30_000) }
        try verify(Self.published, now: Self.signedAt - 29_999)
        #expect(throws: ContentfulWebhookError.timestampInFuture) { try verify(Self.published, now: Self.signedAt - 30_000) }
        for unusable in [Double.nan, .infinity, -.infinity] {
            #expect(throws: ContentfulWebhookError.expired) { try verify(Self.published, now: unusable) }
        }
        let short = try ContentfulWebhookVerifier(secret: Self.secret, timeToLive: .seconds(5))
        #expect(throws: ContentfulWebhookError.expired) { try short.verify(Self.published, now: Self.signedAt + 5000) }
    }

    @Test func theSecretMustBeSixtyFourCharactersAndTheTimeToLivePositive() {
        for secret in ["", String(repeating: "a", count: 63), String(repeating: "a", count: 65)] {
            #expect(throws: ContentfulWebhookError.invalidSecret) { try ContentfulWebhookVerifier(secret: secret) }
            #expect(throws: ContentfulWebhookError.invalidSecret) { try ContentfulWebhookSigner(secret: secret) }
        }
        #expect(throws: ContentfulWebhookError.invalidTimeToLive) { try ContentfulWebhookVerifier(secret: Self.secret, timeToLive: .zero) }
        #expect(throws: ContentfulWebhookError.invalidTimeToLive) { try ContentfulWebhookVerifier(secret: Self.secret, timeToLive: .seconds(-1)) }
    }

    @Test func thePathIsSignedWithItsQueryEncodedAsContentfulDoes() throws {
        // Expected forms computed with JavaScript's encodeURI and Node's querystring.escape.
        #expect(ContentfulWebhookCanonicalRequest.canonicalPath("/trigger/SW5zdGFuY2VGbG93Q29uZmlnOjE=") == "/trigger/SW5zdGFuY2VGbG93Q29uZmlnOjE=")
        #expect(ContentfulWebhookCanonicalRequest.canonicalPath("/hooks/a b?x=1&y=é z?tail")
            == "/hooks/a%20b?x%253D1%2526y%253D%25C3%25A9%2520z")
        #expect(ContentfulWebhookCanonicalRequest.canonicalPath("/p%20q?a=%41") == "/p%2520q?a%253D%252541")
        #expect(ContentfulWebhookCanonicalRequest.canonicalPath("/p?") == "/p")
        // A signed request with a query verifies; changing the query does not.
        let signer = try ContentfulWebhookSigner(secret: Self.secret)
        var request = signer.signed(
            ContentfulWebhookRequest(method: "POST", path: "/webhooks/contentful?space=abc&env=master", headers: [], body: Self.body),
            timestamp: Self.timestamp)
        try verify(request)
        request.path = "/webhooks/contentful?space=abc&env=staging"
        #expect(throws: ContentfulWebhookError.signatureMismatch) { try verify(request) }
    }
}
