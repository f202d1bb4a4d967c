/// Contentful's rule for entry and asset ids: 1 to 64 characters of `A`–`Z`, `a`–`z`, `0`–`9`,
/// `.`, `_` and `-`.
///
/// Every ``ContentfulDeliverySource`` method that takes an entry id checks it with ``isValid(_:)``
/// before the id reaches the cache, the CDA or the entry store; use it to check ids from
/// webhooks or an invalidation bus before passing them on.
public enum ContentfulEntryId {
    /// Most characters in an id: 64.
    public static let maximumLength = 64

    /// True when `id` is 1 to ``maximumLength`` characters, each one of `A`–`Z`, `a`–`z`,
    /// `0`–`9`, `.`, `_` and `-`. Runs in time bounded by ``maximumLength``, whatever the length
    /// of `id`.
    public static func isValid(_ id: String) -> Bool {
        var count = 0
        for byte in id.utf8 {
            count += 1
            guard count <= maximumLength, isAllowed(byte) else { return false }
        }
        return count > 0
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
