import HostPlatform
import OptimizationServiceFace

/// The visitor's state on the visitor's side: one cookie holding the profile id, the consent
/// choice and the selections handed from one page to the next, sealed by ``VisitorStateCodec``
/// (HMAC-SHA256 with the configured keys, expiring after the codec's lifetime). The cookie's value
/// is only ever written by ``VisitorStateCodec/seal(_:)`` and read by ``VisitorStateCodec/openWithExpiry(_:)``:
/// this type adds the cookie around it, and every web integration reads and writes the cookie
/// through it, so the cookie's format exists once.
///
/// **Reading never fails and never trusts.** A missing, forged, unsigned, tampered or expired
/// cookie reads as a new visitor (`VisitorState()`), and the codec counts the refusal
/// (`optimization_visitor_state_rejected_total`).
///
/// **Writing.** Cookies are `HttpOnly`, `SameSite=Lax`, `Path=/` and, unless ``secure`` is
/// false (plain-HTTP development only), `Secure`; `Max-Age` is ``maxAge-property`` seconds.
///
/// **Withdrawn consent.** With ``withdrawals``, a cookie that carries consent and was sealed
/// before its visitor (same nonce) declined reads as declined (``VisitorCookieReading/consentWithdrawn``)
/// and is written again as such; ``OptimizationRequestState`` records each decline it writes.
///
/// **Renewal.** A cookie that opens with less than half the codec's lifetime left reads as
/// ``VisitorCookieReading/renewalDue``, and ``OptimizationRequestState`` then seals it again
/// even when the state did not change: a returning visitor keeps its state, and an unchanged
/// cookie is written at most once per half lifetime, not on every response.
///
/// **Threading.** An immutable `Sendable` value: share one and call it from any task.
public struct VisitorCookies: Sendable {
    /// The default cookie name.
    public static let defaultName = "optimization_state"
    /// One year in seconds: the default `Max-Age`, and the lifetime to give the codec.
    public static let maxAge = 365 * 24 * 3600
    /// Browsers keep cookies up to about 4 KB, name and attributes included: a longer sealed
    /// state (in UTF-8 bytes) is written without its selections.
    public static let maximumCookieLength = 3800
    /// The cookie's `Path` attribute.
    public static let path = "/"
    /// The cookie's `SameSite` attribute: `Lax`, so a top-level navigation from another site
    /// carries it but a cross-site form post or subresource does not.
    public static let sameSite = "Lax"

    /// Seals and opens the state.
    public let codec: VisitorStateCodec
    /// Whether cookies carry the `Secure` attribute (sent over HTTPS only).
    public let secure: Bool
    /// The cookie's name.
    public let name: String
    /// The cookie's `Max-Age` in seconds.
    public let maxAge: Int
    /// The declines this process took, or nil to trust a cookie's consent until it expires.
    public let withdrawals: ConsentWithdrawals?

    /// - Parameters:
    ///   - codec: seals and opens the cookie's value; give it a lifetime of at least `maxAge`.
    ///   - secure: mark cookies `Secure` (the default); false only for plain-HTTP development.
    ///   - name: the cookie's name; default ``defaultName``.
    ///   - maxAge: the cookie's `Max-Age` in seconds; default ``maxAge-type.property`` (one year).
    ///   - withdrawals: the declines to hold older cookies against; default nil (none).
    public init(
        codec: VisitorStateCodec, secure: Bool = true, name: String = VisitorCookies.defaultName, maxAge: Int = VisitorCookies.maxAge,
        withdrawals: ConsentWithdrawals? = nil
    ) {
        self.codec = codec
        self.secure = secure
        self.name = name
        self.maxAge = maxAge
        self.withdrawals = withdrawals
    }

    /// The state in a `Cookie` header (`name=value; name2=value2`; the first cookie named
    /// ``name`` wins), or a new visitor's when there is none or it does not open.
    public func state(cookieHeader: String) -> VisitorState {
        read(cookieHeader: cookieHeader).state
    }

    /// What a `Cookie` header carries for this cookie: the state (a new visitor's when there is
    /// no cookie named ``name`` or it does not open) and whether a cookie was refused. Several
    /// `Cookie` fields are joined with `"; "` first. Pure apart from the codec's refusal count.
    public func read(cookieHeader: String) -> VisitorCookieReading {
        // Byte by byte: `;`, `=` and the space are ASCII, and the header is split at them only
        // (splitting by `Character` walked grapheme clusters through the whole sealed value).
        let bytes = cookieHeader.utf8
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
            var pairStart = start
            while pairStart < end, bytes[pairStart] == UInt8(ascii: " ") { pairStart = bytes.index(after: pairStart) }
            start = end < bytes.endIndex ? bytes.index(after: end) : end
            guard let equals = bytes[pairStart..<end].firstIndex(of: UInt8(ascii: "=")),
                  bytes[pairStart..<equals].elementsEqual(name.utf8)
            else { continue }
            if let (state, expiresAt) = codec.openWithExpiry(String(cookieHeader[bytes.index(after: equals)..<end])) {
                if state.consent == true, let withdrawals, let nonce = state.nonce, let declinedAt = withdrawals.declinedAt(nonce: nonce),
                   expiresAt - codec.lifetime.inMilliseconds <= declinedAt {
                    // Sealed before the visitor declined: the decline stands, and is written back.
                    return VisitorCookieReading(state: VisitorState(consent: false, nonce: nonce), wasRejected: false, renewalDue: true, consentWithdrawn: true)
                }
                return VisitorCookieReading(state: state, wasRejected: false, renewalDue: codec.isRenewalDue(expiresAt: expiresAt))
            }
            return VisitorCookieReading(state: VisitorState(), wasRejected: true)
        }
        return VisitorCookieReading(state: VisitorState(), wasRejected: false)
    }

    /// The cookie value storing `state`: sealed now (so for another codec lifetime), without the
    /// selections when the value would exceed ``maximumCookieLength`` bytes.
    public func value(for state: VisitorState) -> String {
        let value = codec.seal(state)
        guard value.utf8.count > Self.maximumCookieLength else { return value }
        var smaller = state
        smaller.selections = nil
        return codec.seal(smaller)
    }

    /// The `Set-Cookie` header value storing `state`:
    /// `name=<value>; Max-Age=<maxAge>; Path=/; [Secure; ]HttpOnly; SameSite=Lax`, the value from
    /// ``value(for:)``.
    public func setCookieHeader(for state: VisitorState) -> String {
        "\(name)=\(value(for: state)); Max-Age=\(maxAge); Path=\(Self.path); \(secure ? "Secure; " : "")HttpOnly; SameSite=\(Self.sameSite)"
    }

    /// The request consent the engine gets from `state`: the one choice sets both event and
    /// persistence consent, as the reference's boolean consent does.
    public static func requestConsent(_ state: VisitorState) -> RequestConsent {
        RequestConsent(events: state.consent, persistence: state.consent)
    }
}
