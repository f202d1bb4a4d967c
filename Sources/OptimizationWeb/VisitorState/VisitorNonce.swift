/// The random value that binds the app's signed values to one visitor's state
/// (``VisitorState/nonce``): 128 bits from the system's random source, base64url without
/// padding (22 characters of `A–Z a–z 0–9 - _`).
///
/// A replay ticket carries the nonce of the visitor it was issued to and commits only for a
/// request whose verified state holds the same nonce. Unlike a profile id (which a visitor
/// without consent does not have, and which is readable where the app shows it), every visitor
/// that is issued a ticket gets a nonce, and the nonce is never sent anywhere but the visitor's
/// own cookie.
///
/// **Threading.** Pure functions.
public enum VisitorNonce {
    /// The length of a nonce, in characters.
    public static let length = 22

    /// A new random nonce.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in bytes.indices { bytes[index] = generator.next() }
        return Base64URL.encode(bytes)
    }

    /// Whether `text` has a nonce's form: ``length`` base64url characters.
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == length && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F
        }
    }
}
