import Crypto

/// The secret keys that sign and verify visitor state (``VisitorStateCodec``, ``SignedValueCodec``).
///
/// The first key signs every new value; every listed key verifies. To rotate, put the new key
/// first and keep the old one listed until the values it signed have expired (their lifetime),
/// then remove it: from then on those values are refused. Replicas that serve the same visitors
/// must hold the same keys.
///
/// Each key has at least ``minimumKeyLength`` bytes (the output size of SHA-256, as HMAC-SHA256
/// recommends). Key material is never printed: `description` names only the number of keys.
public struct VisitorStateKeys: Sendable, CustomStringConvertible {
    /// The smallest key length accepted, in bytes.
    public static let minimumKeyLength = 32

    /// Signing first, then the other verifying keys, in the order given (bytes: `SymmetricKey`
    /// is not `Sendable` on every platform).
    let material: [[UInt8]]

    /// The keys for HMAC, signing key first. Made anew on each call: a codec calls it once, when
    /// it is created, and keeps the HMAC state it keys with them (``SignedValueCodec``).
    var keys: [SymmetricKey] {
        material.map { SymmetricKey(data: $0) }
    }

    /// Keys from raw bytes.
    /// - Parameter keys: the signing key first, then keys that only verify.
    /// - Throws: ``VisitorStateKeyError/noKeys`` for an empty list,
    ///   ``VisitorStateKeyError/keyTooShort(index:length:)`` for a key shorter than
    ///   ``minimumKeyLength``.
    public init(_ keys: [[UInt8]]) throws(VisitorStateKeyError) {
        guard !keys.isEmpty else { throw .noKeys }
        for (index, key) in keys.enumerated() where key.count < Self.minimumKeyLength {
            throw .keyTooShort(index: index, length: key.count)
        }
        material = keys
    }

    /// Keys from base64 text (standard or URL-safe alphabet, padding optional), as configuration
    /// carries them: `openssl rand -base64 32` makes one.
    /// - Parameter base64Encoded: the signing key first, then keys that only verify.
    /// - Throws: ``VisitorStateKeyError/notBase64(index:)`` for text that is not base64, and the
    ///   errors of ``init(_:)``.
    public init(base64Encoded: [String]) throws(VisitorStateKeyError) {
        var keys: [[UInt8]] = []
        for (index, text) in base64Encoded.enumerated() {
            guard let bytes = Base64URL.decode(Substring(text), acceptingStandardAlphabet: true) else { throw .notBase64(index: index) }
            keys.append(bytes)
        }
        try self.init(keys)
    }

    /// One random key of ``minimumKeyLength`` bytes from the system's secure generator: for a
    /// single process whose visitor state need not survive a restart.
    public static func random() -> VisitorStateKeys {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<minimumKeyLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        // Cannot fail: one key of the minimum length.
        return VisitorStateKeys(unchecked: [bytes])
    }

    private init(unchecked material: [[UInt8]]) {
        self.material = material
    }

    /// The number of keys; never their material.
    public var description: String {
        "VisitorStateKeys(\(material.count) key\(material.count == 1 ? "" : "s"))"
    }
}
