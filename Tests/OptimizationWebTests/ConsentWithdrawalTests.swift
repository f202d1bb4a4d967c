import Logging
import Optimization
import OptimizationTesting
import OptimizationTestSupport
import Testing

/// Withdrawn consent: a copy of a visitor's cookie sealed before the visitor declined does not
/// bring the consent back.
@Suite struct ConsentWithdrawalTests {
    static let keys = WebIntegrationFixtures.keys

    static func cookies(_ clock: ManualClock, withdrawals: ConsentWithdrawals?) -> VisitorCookies {
        VisitorCookies(codec: VisitorStateCodec(keys: keys, lifetime: .seconds(VisitorCookies.maxAge), clock: clock), withdrawals: withdrawals)
    }

    /// The `Set-Cookie` value a response with `state` (after `request`) writes, as a `Cookie` header.
    static func respond(_ cookies: VisitorCookies, cookieHeader: String, store: ((VisitorState) -> VisitorState)? = nil) -> String? {
        let service = OptimizationService(config: OptimizationConfig(clientId: "org-1"))
        let state = OptimizationRequestState(
            service: service, cookies: cookies, cookieHeader: cookieHeader, logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
        ) { RequestOptions(consent: VisitorCookies.requestConsent($0), profileId: $0.profileId) }
        if let store { state.store(store(state.visitorState)) }
        return state.setCookieHeader(with: cookies).map { String($0.prefix { $0 != ";" }) }
    }

    @Test func aCookieSealedBeforeTheVisitorDeclinedReadsAsDeclined() throws {
        let clock = ManualClock()
        let withdrawals = ConsentWithdrawals(retention: .seconds(VisitorCookies.maxAge), clock: clock)
        let cookies = Self.cookies(clock, withdrawals: withdrawals)
        // The visitor accepts, and the consented cookie is copied.
        let consented = try #require(Self.respond(cookies, cookieHeader: "", store: { ConsentChoice.accept.applied(to: $0) }))
        #expect(cookies.read(cookieHeader: consented).state.consent == true)
        clock.advance(by: .seconds(60))
        // The visitor declines with that cookie.
        let declined = try #require(Self.respond(cookies, cookieHeader: consented, store: { ConsentChoice.decline.applied(to: $0) }))
        #expect(cookies.read(cookieHeader: declined).state.consent == false)
        #expect(withdrawals.count == 1)
        // The old copy is presented again: the decline stands, and the response writes it back.
        clock.advance(by: .seconds(60))
        let replayed = cookies.read(cookieHeader: consented)
        #expect(replayed.state.consent == false && replayed.state.profileId == nil && replayed.consentWithdrawn)
        let rewritten = try #require(Self.respond(cookies, cookieHeader: consented))
        #expect(cookies.read(cookieHeader: rewritten).state.consent == false)
        // Consenting again afterwards holds.
        clock.advance(by: .seconds(60))
        let again = try #require(Self.respond(cookies, cookieHeader: declined, store: { ConsentChoice.accept.applied(to: $0) }))
        #expect(cookies.read(cookieHeader: again).state.consent == true)
        // Without a record of declines, the old copy is trusted until it expires.
        #expect(Self.cookies(clock, withdrawals: nil).read(cookieHeader: consented).state.consent == true)
    }

    @Test func declinesAreBoundedAndExpireWithTheCookiesLifetime() {
        let clock = ManualClock()
        let withdrawals = ConsentWithdrawals(retention: .seconds(100), capacity: 3, clock: clock)
        let nonces = (0..<5).map { _ in VisitorNonce.make() }
        for nonce in nonces {
            withdrawals.recordDecline(nonce: nonce)
            clock.advance(by: .seconds(10))
        }
        #expect(withdrawals.count == 3 && withdrawals.declinedAt(nonce: nonces[0]) == nil && withdrawals.declinedAt(nonce: nonces[4]) != nil)
        clock.advance(by: .seconds(100))
        #expect(withdrawals.declinedAt(nonce: nonces[4]) == nil, "older than every cookie that could carry it")
        withdrawals.recordDecline(nonce: VisitorNonce.make())
        #expect(withdrawals.count == 1, "expired declines leave at once")
    }
}
