import Foundation
import Optimization

/// Forged visitor-state cookie values, as an attacker makes them, for tests that a web
/// integration treats every one as a new visitor.
public enum VisitorStateForgery {
    /// A codec with a key the app does not hold (an attacker's).
    public static let foreignCodec = VisitorStateCodec(keys: VisitorStateKeys.random(), lifetime: .seconds(3600))

    /// A sealed text whose payload is replaced by `json` (base64url), keeping the original MAC.
    public static func withPayload(_ sealed: String, _ json: String) -> String {
        let parts = sealed.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return sealed + "." }
        let payload = Data(json.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "\(parts[0]).\(payload).\(parts[2])"
    }

    /// Three forgeries claiming `profileId` with consent: sealed with another key, `genuine`'s MAC
    /// over another payload, and an unsigned value.
    /// - Parameters:
    ///   - profileId: the profile id every forgery claims.
    ///   - genuine: a value the app sealed (its MAC is reused).
    public static func values(claiming profileId: String, genuine: String) -> [String] {
        [
            foreignCodec.seal(VisitorState(profileId: profileId, consent: true)),
            withPayload(genuine, #"{"exp":99999999999999,"v":{"p":"\#(profileId)","c":true}}"#),
            "v1." + Data(#"{"p":"\#(profileId)","c":true}"#.utf8).base64EncodedString(),
        ]
    }
}
