/// Why a set of signing keys was refused by ``VisitorStateKeys``.
public enum VisitorStateKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No key was given: at least one is needed to sign.
    case noKeys
    /// The key at `index` (zero-based, in the order given) has `length` bytes; at least
    /// ``VisitorStateKeys/minimumKeyLength`` are required.
    case keyTooShort(index: Int, length: Int)
    /// The key text at `index` is not base64 (standard or URL-safe alphabet, padding optional).
    case notBase64(index: Int)

    /// A sentence naming the key by its position, never its value.
    public var description: String {
        switch self {
        case .noKeys:
            return "no visitor-state key: at least one is required"
        case .keyTooShort(let index, let length):
            return "visitor-state key \(index + 1) has \(length) bytes; at least \(VisitorStateKeys.minimumKeyLength) are required"
        case .notBase64(let index):
            return "visitor-state key \(index + 1) is not base64"
        }
    }
}
