/// What ``VisitorCookies/read(cookieHeader:)`` found in a request's `Cookie` header.
/// An immutable `Sendable` value.
public struct VisitorCookieReading: Sendable, Equatable {
    /// The visitor's verified state: a new visitor's (`VisitorState()`) when the request carried
    /// no state cookie or one that did not open.
    public let state: VisitorState
    /// True when the request carried a state cookie that did not open (forged, tampered, signed
    /// with another key or expired): the visitor is treated as new.
    public let wasRejected: Bool
    /// True when the cookie opened but less than half its seal's lifetime is left
    /// (`VisitorStateCodec/isRenewalDue(expiresAt:)`): the response should seal the state again,
    /// even unchanged, so a returning visitor's cookie does not lapse.
    public let renewalDue: Bool
    /// True when the cookie carried consent but was sealed before its visitor declined
    /// (`ConsentWithdrawals`): ``state`` is the decline, and ``renewalDue`` writes it back.
    public let consentWithdrawn: Bool

    /// A reading of `state`; `wasRejected` tells that a cookie was present but refused;
    /// `renewalDue` that an opened cookie should be sealed again; `consentWithdrawn` that its
    /// consent was older than the visitor's decline.
    public init(state: VisitorState, wasRejected: Bool, renewalDue: Bool = false, consentWithdrawn: Bool = false) {
        self.state = state
        self.wasRejected = wasRejected
        self.renewalDue = renewalDue
        self.consentWithdrawn = consentWithdrawn
    }
}
