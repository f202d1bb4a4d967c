import OptimizationServiceFace
import Logging
import Synchronization

/// One HTTP request's visitor, as a web integration's middleware prepares it: the
/// `OptimizationRequest` built from the visitor's state cookie (``request``), the state the
/// cookie carried (``visitorState``), and the state the response stores
/// (``responseVisitorState``, or one a handler gives to ``store(_:)``).
///
/// **Threading.** A `Sendable` reference; the state given to ``store(_:)`` is guarded by a lock,
/// so handlers may call it from any task of the request.
public final class OptimizationRequestState: Sendable {
    /// The visitor's request of the `OptimizationService`: consent, profile id and handoff
    /// selections from the state cookie, locale, event context and request id from the HTTP
    /// request. Call its event and resolve methods in the handler.
    public let request: OptimizationRequest
    /// The state the visitor's cookie carried: a new visitor's (`VisitorState()`) when there was
    /// none, or when it was forged, tampered, signed with another key or expired (see
    /// ``cookieWasRejected``).
    public let visitorState: VisitorState
    /// True when the request carried a state cookie that did not open (forged, tampered, signed
    /// with another key or expired): the visitor is treated as new.
    public let cookieWasRejected: Bool
    /// True when the visitor's cookie opened with less than half its lifetime left: the response
    /// seals it again even when the state did not change (``setCookieHeader(with:)``).
    public let cookieRenewalDue: Bool
    private let stored = Mutex<VisitorState?>(nil)
    private let issuedNonce = Mutex<String?>(nil)

    /// A prepared request: `request` for the visitor whose cookie gave `visitorState`;
    /// `cookieRenewalDue` when that cookie should be sealed again.
    public init(request: OptimizationRequest, visitorState: VisitorState, cookieWasRejected: Bool, cookieRenewalDue: Bool = false) {
        self.request = request
        self.visitorState = visitorState
        self.cookieWasRejected = cookieWasRejected
        self.cookieRenewalDue = cookieRenewalDue
    }

    /// Reads the visitor's state from `cookieHeader` through `cookies` and creates its request
    /// with `service.forRequest(options(state))`. Nothing is sent. A refused cookie is logged at
    /// debug level, without its value.
    /// - Parameters:
    ///   - service: creates the visitor's request; it need not be running yet, but event calls need it.
    ///   - cookies: reads the state cookie.
    ///   - cookieHeader: the request's `Cookie` fields joined with `"; "` (empty for none).
    ///   - logger: the request's logger.
    ///   - options: the request's options for the visitor's verified state.
    public convenience init(
        service: OptimizationService, cookies: VisitorCookies, cookieHeader: String, logger: Logger,
        options: (_ visitorState: VisitorState) -> RequestOptions
    ) {
        let reading = cookies.read(cookieHeader: cookieHeader)
        if reading.wasRejected {
            logger.debug("visitor state cookie rejected (forged, tampered or expired): treated as a new visitor")
        }
        self.init(
            request: service.forRequest(options(reading.state)), visitorState: reading.state, cookieWasRejected: reading.wasRejected,
            cookieRenewalDue: reading.renewalDue)
    }

    /// Replaces the state the response stores: the middleware writes `state` into the cookie
    /// (when it differs from ``visitorState``, what the visitor sent) instead of deriving it from
    /// the request. Use it when the visitor's choice changes (consent) or to store less than the
    /// request learned. The last call wins.
    public func store(_ state: VisitorState) {
        stored.withLock { $0 = state }
    }

    /// The visitor's nonce (``VisitorState/nonce``): the one its state carries, else one issued
    /// now (the same for every call of this request) that the response's state stores, so the
    /// visitor's browser holds it from this response on. Bind the app's tickets to it.
    public func visitorNonce() -> String {
        if let nonce = storedVisitorState?.nonce ?? visitorState.nonce { return nonce }
        return issuedNonce.withLock { issued in
            if let issued { return issued }
            let nonce = VisitorNonce.make()
            issued = nonce
            return nonce
        }
    }

    /// The state given to ``store(_:)``, if any.
    public var storedVisitorState: VisitorState? {
        stored.withLock { $0 }
    }

    /// The state the response stores, as of now: the one given to ``store(_:)`` when there is one;
    /// otherwise ``visitorState`` with, when the request may persist the profile
    /// (`OptimizationRequest/canPersistProfile`, the visitor consented), the profile id and
    /// selections the request holds now (after its Experience calls). Either way it carries the
    /// nonce ``visitorNonce()`` issued, when the state has none.
    public var responseVisitorState: VisitorState {
        var next: VisitorState
        if let stored = storedVisitorState {
            next = stored
        } else {
            next = visitorState
            if request.canPersistProfile {
                if let id = request.profileId { next.profileId = id }
                if let selections = request.selectedOptimizations { next.selections = selections }
            }
        }
        if next.nonce == nil, let issued = issuedNonce.withLock({ $0 }) { next.nonce = issued }
        return next
    }

    /// The `Set-Cookie` header value the response carries, from ``responseVisitorState`` sealed by
    /// `cookies`; nil when that state equals ``visitorState`` and the cookie is not due for
    /// renewal (``cookieRenewalDue``): the browser keeps the cookie it has, so expiry slides only
    /// once per half lifetime, not with each visit.
    ///
    /// When the response's state declines consent that the request's state did not decline, the
    /// decline is recorded in the cookies' `ConsentWithdrawals` (when there are any), so copies of
    /// the older cookie no longer carry consent.
    public func setCookieHeader(with cookies: VisitorCookies) -> String? {
        let next = responseVisitorState
        if next.consent == false, visitorState.consent != false, let nonce = next.nonce {
            cookies.withdrawals?.recordDecline(nonce: nonce)
        }
        return next == visitorState && !cookieRenewalDue ? nil : cookies.setCookieHeader(for: next)
    }
}
