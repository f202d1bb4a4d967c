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

    public init(consent: Bool? = nil, profileId: String? = nil, handoff: SelectedOptimizations? = nil) {
        self.consent = consent
        self.profileId = profileId
        self.handoff = handoff
    }

    /// Reads the cookies of `request`.
    public init(request: Request) {
        let cookies = request.cookies
        switch cookies[Self.consentCookieName]?.value {
        case "yes": consent = true
        case "no": consent = false
        default: consent = nil
        }
        if let id = cookies[Self.profileCookieName]?.value, !id.isEmpty, Self.isValidProfileId(id) {
            profileId = id
        } else {
            profileId = nil
        }
        handoff = cookies[SelectionHandoff.cookieName].flatMap { SelectionHandoff.decode($0.value) }
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
