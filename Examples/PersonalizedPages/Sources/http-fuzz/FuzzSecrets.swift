import Crypto
import Foundation
import Optimization

/// What the fuzzer knows of the app's secrets, from the environment the app reads them from
/// (`scripts/fuzz-http` gives both the same): the visitor-state key (`PP_VISITOR_STATE_KEYS`,
/// the first one) and an OFREP bearer token (`PP_OFREP_TOKENS`, the first one).
///
/// With the key the fuzzer seals values the app's signatures accept but whose contents are wrong
/// (wrong shapes, another purpose, expired, MACs over malformed payloads), which only an insider
/// could make: the app must refuse them as cleanly as junk. Without it, those become forgeries
/// signed with a key of the fuzzer's own. Without the token, OFREP requests carry junk credentials
/// only.
struct FuzzSecrets {
    /// The key's bytes (HMAC key of the v1 wire format); a random one when none was given.
    let keyBytes: [UInt8]
    /// True when the key is the app's.
    let hasAppKey: Bool
    /// The app's OFREP bearer token, if given.
    let ofrepToken: String?
    /// Seals visitor state as the app does.
    let stateCodec: VisitorStateCodec
    /// Seals any JSON for the visitor-state purpose (valid MACs over wrong shapes).
    let statePurposeCodec: SignedValueCodec
    /// Seals replay tickets (any JSON) as the app does.
    let ticketCodec: SignedValueCodec
    /// Seals tickets that expire 1 ms after sealing: expired by the time they arrive.
    let expiredTicketCodec: SignedValueCodec
    /// Seals visitor state that expires 1 ms after sealing.
    let expiredStateCodec: VisitorStateCodec
    /// Seals OFREP targeting tokens as the app does (`{"profile": <id>}`, purpose
    /// `ofrep-targeting`).
    let targetingCodec: SignedValueCodec

    /// The purpose of OFREP targeting tokens (the library's `OFREPTargetingToken.purpose`).
    static let targetingPurpose = "ofrep-targeting"

    init(environment: [String: String]) {
        let given = (environment["PP_VISITOR_STATE_KEYS"] ?? "").split(separator: ",").first
            .map { $0.trimmingCharacters(in: .whitespaces) }
        let keys: VisitorStateKeys
        if let given, let decoded = Data(base64Encoded: given), let parsed = try? VisitorStateKeys(base64Encoded: [given]) {
            keys = parsed
            keyBytes = Array(decoded)
            hasAppKey = true
        } else {
            let bytes = (0..<32).map { _ in UInt8.random(in: 0...255) }
            keys = (try? VisitorStateKeys([bytes])) ?? .random()
            keyBytes = bytes
            hasAppKey = false
        }
        ofrepToken = (environment["PP_OFREP_TOKENS"] ?? "").split(separator: ",").first
            .map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        stateCodec = VisitorStateCodec(keys: keys, lifetime: .seconds(3600))
        statePurposeCodec = SignedValueCodec(keys: keys, purpose: VisitorStateCodec.purpose, lifetime: .seconds(3600))
        ticketCodec = SignedValueCodec(keys: keys, purpose: ReplayTicket.purpose, lifetime: .seconds(600))
        expiredTicketCodec = SignedValueCodec(keys: keys, purpose: ReplayTicket.purpose, lifetime: .milliseconds(1))
        expiredStateCodec = VisitorStateCodec(keys: keys, lifetime: .milliseconds(1))
        targetingCodec = SignedValueCodec(keys: keys, purpose: Self.targetingPurpose, lifetime: .seconds(3600))
    }

    /// A v1 text whose MAC is right for `payload` (any bytes: malformed JSON, no `exp`, …) and
    /// `purpose`, signed with ``keyBytes``: `v1.<base64url(payload)>.<base64url(HMAC)>`.
    func macOver(payload: [UInt8], purpose: String) -> String {
        let encoded = Self.base64URL(payload)
        var signed = Array("v1".utf8)
        signed.append(0)
        signed += Array(purpose.utf8)
        signed.append(0)
        signed += Array(encoded.utf8)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: keyBytes))
        return "v1.\(encoded).\(Self.base64URL(Array(mac)))"
    }

    /// Unpadded base64url.
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
