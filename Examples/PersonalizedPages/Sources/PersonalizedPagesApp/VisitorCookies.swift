import Hummingbird
import Optimization

/// The visitor's state on the visitor's side: one cookie, `pp_state`, holding the profile id, the
/// consent choice and the selections handed from one page to the next, sealed by the library's
/// `VisitorStateCodec` (HMAC-SHA256 with the configured keys, expiring after ``maxAge``).
///
/// Reading never fails and never trusts: a missing, forged, unsigned, tampered or expired cookie
/// reads as a new visitor (`VisitorState()`), and the codec counts the refusal
/// (`optimization_visitor_state_rejected_total`). Cookies are written `HttpOnly`,
/// `SameSite=Lax`, `Path=/` and, unless configured off for plain-HTTP development, `Secure`.
/// Thread-safe (immutable).
public struct VisitorCookies: Sendable {
    /// The cookie holding the sealed state.
    public static let cookieName = "pp_state"
    /// One year: the cookie's `Max-Age` and the sealed state's lifetime.
    public static let maxAge = 365 * 24 * 3600
    /// Browsers keep cookies up to about 4 KB, name and attributes included: a longer sealed
    /// state is written without its selections.
    public static let maximumCookieLength = 3800

    /// Seals and opens the state.
    public let codec: VisitorStateCodec
    /// Whether cookies carry the `Secure` attribute (sent over HTTPS only).
    public let secure: Bool

    /// - Parameters:
    ///   - codec: seals and opens the cookie's value.
    ///   - secure: mark cookies `Secure`; false only for plain-HTTP development.
    public init(codec: VisitorStateCodec, secure: Bool) {
        self.codec = codec
        self.secure = secure
    }

    /// The state in the request's `pp_state` cookie, or a new visitor's.
    public func state(of request: Request) -> VisitorState {
        state(cookieHeader: request.headers[values: .cookie].joined(separator: "; "))
    }

    /// The state in a `Cookie` header (`name=value; name2=value2`; the first `pp_state` wins),
    /// or a new visitor's when there is none or it does not open.
    public func state(cookieHeader: String) -> VisitorState {
        for pair in cookieHeader.split(separator: ";") {
            let trimmed = pair.drop { $0 == " " }
            guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == Self.cookieName else { continue }
            return codec.open(String(trimmed[trimmed.index(after: equals)...])) ?? VisitorState()
        }
        return VisitorState()
    }

    /// The cookie storing `state`: sealed now (so for another ``maxAge``), without the selections
    /// when the value would exceed ``maximumCookieLength``.
    public func cookie(for state: VisitorState) -> Cookie {
        var value = codec.seal(state)
        if value.utf8.count > Self.maximumCookieLength {
            var smaller = state
            smaller.selections = nil
            value = codec.seal(smaller)
        }
        return Cookie(name: Self.cookieName, value: value, maxAge: Self.maxAge, path: "/", secure: secure, httpOnly: true, sameSite: .lax)
    }

    /// The request consent the engine gets from `state`: the one choice sets both event and
    /// persistence consent, as the reference's boolean consent does.
    public static func requestConsent(_ state: VisitorState) -> RequestConsent {
        RequestConsent(events: state.consent, persistence: state.consent)
    }
}
