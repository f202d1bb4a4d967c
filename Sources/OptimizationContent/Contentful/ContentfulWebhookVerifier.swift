import Crypto
import HostPlatform

/// Checks that a webhook request comes from Contentful: its `x-contentful-signature` must be the
/// HMAC-SHA256 of the request (method, path with query, the headers named in
/// `x-contentful-signed-headers`, body), keyed with the space's webhook signing secret, and its
/// `x-contentful-timestamp` recent.
///
/// ```swift
/// let verifier = try ContentfulWebhookVerifier(secret: signingSecret)
/// try verifier.verify(ContentfulWebhookRequest(method: "POST", path: uri, headers: headers, body: body),
///                     now: clock.now())
/// ```
///
/// **What is checked.** Header names are matched without regard to case and values without
/// surrounding whitespace; every header named in `x-contentful-signed-headers` must be present
/// (the timestamp and the list itself are always signed); the signed headers are taken in name
/// order, as Contentful signs them. The timestamp must be less than the time to live old and less
/// than the time to live ahead of `now`. The signature is compared in constant time.
///
/// **Threading.** An immutable `Sendable` value: share one and call it from any task.
public struct ContentfulWebhookVerifier: Sendable {
    /// How old (or how far ahead of `now`) a signed request may be.
    public let timeToLive: Duration
    /// The secret's UTF-8 bytes: the HMAC key.
    private let secretBytes: [UInt8]

    /// A verifier for one space's signing secret.
    /// - Parameters:
    ///   - secret: the webhook signing secret from the space's settings: exactly 64 characters
    ///     (UTF-16 code units, as Contentful counts them); used as its UTF-8 bytes.
    ///   - timeToLive: how old a signed request may be (default 30 s, Contentful's); requests more
    ///     than this far in the future are refused too.
    /// - Throws: ``ContentfulWebhookError/invalidSecret`` unless `secret` is exactly 64
    ///   characters; ``ContentfulWebhookError/invalidTimeToLive`` when `timeToLive` is not positive.
    public init(secret: String, timeToLive: Duration = .seconds(30)) throws(ContentfulWebhookError) {
        guard secret.utf16.count == 64 else { throw .invalidSecret }
        guard timeToLive > .zero else { throw .invalidTimeToLive }
        self.secretBytes = Array(secret.utf8)
        self.timeToLive = timeToLive
    }

    /// Verifies one request. Returns when it is signed with this verifier's secret and recent;
    /// throws otherwise (answer such requests with 401 or 403, and act on nothing in them).
    /// - Parameters:
    ///   - request: the request as received.
    ///   - now: the current Unix time in milliseconds (pass the service clock's `now()`).
    /// - Throws: ``ContentfulWebhookError/missingSignature``, ``ContentfulWebhookError/missingTimestamp``,
    ///   ``ContentfulWebhookError/invalidTimestamp``, ``ContentfulWebhookError/missingSignedHeaders``,
    ///   ``ContentfulWebhookError/missingSignedHeader(_:)``, ``ContentfulWebhookError/expired``
    ///   (also when `now` is not finite), ``ContentfulWebhookError/timestampInFuture`` or
    ///   ``ContentfulWebhookError/signatureMismatch``.
    /// - Returns: the verified head (the signature, timestamp and signed headers).
    @discardableResult
    public func verify(_ request: ContentfulWebhookRequest, now: Double) throws(ContentfulWebhookError) -> VerifiedHead {
        let head = try verifyHead(method: request.method, path: request.path, headers: request.headers, now: now)
        let canonical = ContentfulWebhookCanonicalRequest.make(
            method: request.method, path: request.path, headers: head.signedHeaders, timestamp: head.timestamp, body: request.body)
        guard let received = Self.bytes(ofHex: head.signature),
              HMAC<SHA256>.isValidAuthenticationCode(received, authenticating: canonical.bytes, using: SymmetricKey(data: secretBytes))
        else { throw .signatureMismatch }
        return head
    }

    /// What ``verifyHead(method:path:headers:now:)`` found: the signature to check against the
    /// body, the timestamp, and the signed headers by normalized name.
    public struct VerifiedHead: Sendable, Equatable {
        /// The `x-contentful-signature` value (not yet checked).
        public var signature: String
        /// The `x-contentful-timestamp`, Unix time in milliseconds.
        public var timestamp: Int64
        /// The signed headers other than the timestamp and the list, by lower-case name.
        public var signedHeaders: [String: String]
    }

    /// Everything of ``verify(_:now:)`` that needs no body: the signature, timestamp and
    /// signed-headers fields are present, every listed header is there, the timestamp is within
    /// the time to live, and the target has at most one `?`. Call it before reading the body, so
    /// an unsigned or stale request costs no body read.
    /// - Parameters:
    ///   - method: the HTTP method, as received.
    ///   - path: the request target as received (path and query).
    ///   - headers: every header field of the request.
    ///   - now: the current Unix time in milliseconds.
    /// - Returns: the signature to check against the body, the timestamp and the signed headers.
    /// - Throws: the errors of ``verify(_:now:)`` but ``ContentfulWebhookError/signatureMismatch``,
    ///   and ``ContentfulWebhookError/unsignedTarget``.
    public func verifyHead(
        method: String, path: String, headers: [(name: String, value: String)], now: Double
    ) throws(ContentfulWebhookError) -> VerifiedHead {
        typealias Canonical = ContentfulWebhookCanonicalRequest
        var byName: [String: [String]] = [:]
        for header in headers {
            byName[Canonical.normalizedName(header.name), default: []].append(Canonical.trimmed(header.value))
        }
        func value(_ name: String) -> String? { byName[name].map { $0.joined(separator: ", ") } }

        guard let signature = value(Canonical.signatureHeader) else { throw .missingSignature }
        guard let timestampText = value(Canonical.timestampHeader) else { throw .missingTimestamp }
        guard let timestamp = Self.timestamp(timestampText) else { throw .invalidTimestamp }
        guard let listed = value(Canonical.signedHeadersHeader) else { throw .missingSignedHeaders }
        guard path.utf8.filter({ $0 == UInt8(ascii: "?") }).count <= 1 else { throw .unsignedTarget }

        let age = now - Double(timestamp)
        let limit = timeToLive.inMilliseconds
        guard age.isFinite, age < limit else { throw .expired }
        guard -age < limit else { throw .timestampInFuture }

        var signed: [String: String] = [:]
        for listedName in listed.split(separator: ",", omittingEmptySubsequences: false) {
            let name = Canonical.normalizedName(String(listedName))
            if name == Canonical.timestampHeader || name == Canonical.signedHeadersHeader { continue }
            guard let headerValue = value(name) else { throw .missingSignedHeader(String(listedName)) }
            signed[name] = headerValue
        }
        return VerifiedHead(signature: signature, timestamp: timestamp, signedHeaders: signed)
    }

    /// The Unix time in milliseconds `text` holds: 1 to 16 decimal digits.
    private static func timestamp(_ text: String) -> Int64? {
        guard (1...16).contains(text.utf8.count), text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }

    /// The 32 bytes of a 64-digit hexadecimal signature (either case); nil for anything else.
    private static func bytes(ofHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
