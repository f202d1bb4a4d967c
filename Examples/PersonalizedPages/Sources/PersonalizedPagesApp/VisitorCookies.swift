import Hummingbird
import Optimization

/// What the service keeps about a visitor on the visitor's side, in cookies: the consent the
/// consent form recorded, the profile id (written only with persistence consent) and the
/// selection handoff (``SelectionHandoff``, also only with persistence consent).
///
/// Reading never fails: a missing or unrecognised value means "not given".
public struct VisitorCookies: Sendable, Equatable {
    /// Cookie set by `POST /consent`: `yes` or `no`.
    public static let consentCookieName = "pp_consent"
    /// Cookie holding the Optimization profile id.
    public static let profileCookieName = "pp_profile"
    /// One year, in seconds.
    public static let maxAge = 365 * 24 * 3600

    /// The visitor's recorded choice: true (accepted), false (declined) or nil (not asked yet).
    public var consent: Bool?
    /// The profile id stored on an earlier page, if any.
    public var profileId: String?
    /// The selections handed off by an earlier page, if any.
    public var handoff: SelectedOptimizations?
    /// The handoff cookie's value as the browser sent it, if any.
    public var handoffCookie: String?

    public init(consent: Bool? = nil, profileId: String? = nil, handoff: SelectedOptimizations? = nil) {
        self.consent = consent
        self.profileId = profileId
        self.handoff = handoff
    }

    /// Reads the cookies of `request`: its `Cookie` header is scanned once for the three names.
    public init(request: Request) {
        self.init(cookieHeader: request.headers[values: .cookie].joined(separator: "; "))
    }

    /// Reads a `Cookie` header (`name=value; name2=value2`; the first of a repeated name wins).
    public init(cookieHeader: String) {
        var consentValue: Substring?
        var profileValue: Substring?
        var handoffValue: Substring?
        for pair in cookieHeader.split(separator: ";") {
            let trimmed = pair.drop { $0 == " " }
            guard let equals = trimmed.firstIndex(of: "=") else { continue }
            let name = trimmed[..<equals]
            let value = trimmed[trimmed.index(after: equals)...]
            switch name {
            case Self.consentCookieName where consentValue == nil: consentValue = value
            case Self.profileCookieName where profileValue == nil: profileValue = value
            case SelectionHandoff.cookieName where handoffValue == nil: handoffValue = value
            default: break
            }
        }
        switch consentValue {
        case "yes": consent = true
        case "no": consent = false
        default: consent = nil
        }
        if let id = profileValue.map(String.init), !id.isEmpty, Self.isValidProfileId(id) {
            profileId = id
        } else {
            profileId = nil
        }
        handoffCookie = handoffValue.map(String.init)
        handoff = handoffCookie.flatMap(SelectionHandoff.decode)
    }

    /// The request consent the engine gets: the one choice sets both event and persistence
    /// consent, as the reference's boolean consent does.
    public var requestConsent: RequestConsent {
        RequestConsent(events: consent, persistence: consent)
    }

    /// Profile ids are opaque API ids; accept only cookie-safe printable ASCII of sane length.
    static func isValidProfileId(_ id: String) -> Bool {
        id.utf8.count <= 128 && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F }
    }

    /// A cookie for the whole site, HTTP only, SameSite=Lax.
    static func cookie(name: String, value: String, maxAge: Int = VisitorCookies.maxAge) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/", httpOnly: true, sameSite: .lax)
    }
}
