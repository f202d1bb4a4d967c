import Foundation

/// The visitor's answer on a consent form: the consent route's body,
/// `application/x-www-form-urlencoded` with the field `consent=accept|decline`, as a plain HTML
/// form posts it.
///
/// **Threading.** An immutable `Sendable` value; parsing is pure.
public enum ConsentChoice: String, Sendable, Equatable {
    /// `consent=accept`: the visitor consents to events and to storing its profile.
    case accept
    /// `consent=decline`: the visitor declines; nothing but the choice is stored.
    case decline

    /// The largest consent form the route reads, in bytes: 4 KiB.
    public static let maximumFormBytes = 4096

    /// The choice in a form body (UTF-8; `+` and percent escapes decoded; the last of a repeated
    /// `consent` field wins), or nil when it has no `consent=accept` or `consent=decline`: the
    /// route answers 400 and changes nothing.
    public init?(formBody: [UInt8]) {
        guard let value = Self.fields(String(decoding: formBody, as: UTF8.self))["consent"], let choice = ConsentChoice(rawValue: value) else {
            return nil
        }
        self = choice
    }

    /// The state the visitor's cookie stores after this choice, from the state it carried:
    /// accepting keeps the state, records the consent and gives the visitor a nonce when it has
    /// none (so a later decline can be held against this cookie's copies: `ConsentWithdrawals`);
    /// declining replaces it with the choice and the nonce alone (no profile id, no selections).
    public func applied(to state: VisitorState) -> VisitorState {
        switch self {
        case .accept:
            var next = state
            next.consent = true
            if next.nonce == nil { next.nonce = VisitorNonce.make() }
            return next
        case .decline:
            return VisitorState(consent: false, nonce: state.nonce)
        }
    }

    /// `application/x-www-form-urlencoded` fields (the last of a repeated name wins).
    static func fields(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }
}
