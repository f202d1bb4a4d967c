import Foundation
import JavaScriptHost
import Logging
import Optimization
import OptimizationTesting
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import Testing

/// The framework-neutral web glue both integrations (Hummingbird, Vapor) are thin adapters over:
/// the state cookie, the same-site rule, the consent form, replay tickets and their ledger, the
/// webhook receiver, the request options of an HTTP request and the OFREP route helpers.
@Suite struct WebIntegrationSupportTests {
    static let keys = WebIntegrationFixtures.keys
    static let quiet = Logger(label: "web-tests", factory: { _ in SwiftLogNoOpLogHandler() })

    static func cookies(_ clock: ManualClock = ManualClock(), secure: Bool = true) -> VisitorCookies {
        VisitorCookies(codec: VisitorStateCodec(keys: keys, lifetime: .seconds(VisitorCookies.maxAge), clock: clock), secure: secure)
    }

    @Test func theStateCookieReadsOnlyWhatTheCodecSealed() {
        let cookies = Self.cookies()
        let state = VisitorState(profileId: "web-visitor", consent: true)
        let sealed = cookies.value(for: state)
        #expect(cookies.read(cookieHeader: "a=1; \(cookies.name)=\(sealed); b=2") == VisitorCookieReading(state: state, wasRejected: false))
        #expect(cookies.read(cookieHeader: "a=1") == VisitorCookieReading(state: VisitorState(), wasRejected: false), "no cookie: a new visitor")
        for forged in VisitorStateForgery.values(claiming: "web-forged", genuine: sealed) {
            #expect(cookies.read(cookieHeader: "\(cookies.name)=\(forged)") == VisitorCookieReading(state: VisitorState(), wasRejected: true))
        }
        #expect(cookies.state(cookieHeader: "\(cookies.name)=\(sealed); \(cookies.name)=garbage").profileId == "web-visitor", "the first wins")
        // The header's edges: empty pairs, runs of spaces, a pair without `=`, a longer name that
        // starts with the cookie's, an empty value, a value at the very end.
        let opened = VisitorCookieReading(state: state, wasRejected: false)
        #expect(cookies.read(cookieHeader: ";;  ; a ;   \(cookies.name)=\(sealed)") == opened)
        #expect(cookies.read(cookieHeader: "\(cookies.name)x=\(sealed); \(cookies.name)=\(sealed);") == opened)
        #expect(cookies.read(cookieHeader: "x\(cookies.name)=\(sealed)") == VisitorCookieReading(state: VisitorState(), wasRejected: false))
        #expect(cookies.read(cookieHeader: "\(cookies.name)=") == VisitorCookieReading(state: VisitorState(), wasRejected: true))
        #expect(cookies.read(cookieHeader: "") == VisitorCookieReading(state: VisitorState(), wasRejected: false))
    }

    @Test func theSetCookieHeaderCarriesTheSealAndItsAttributes() throws {
        let clock = ManualClock()
        let secure = Self.cookies(clock).setCookieHeader(for: VisitorState(consent: true))
        let parts = secure.components(separatedBy: "; ")
        #expect(parts.dropFirst() == ["Max-Age=\(VisitorCookies.maxAge)", "Path=/", "Secure", "HttpOnly", "SameSite=Lax"])
        #expect(Self.cookies(clock).state(inSetCookieHeaders: [secure]) == VisitorState(consent: true))
        #expect(!Self.cookies(clock, secure: false).setCookieHeader(for: VisitorState()).contains("Secure"))
    }

    @Test func anUnchangedCookieIsSealedAgainOnlyOnceHalfItsLifetimeHasPassed() throws {
        let clock = ManualClock(start: 1_700_000_000_000)
        let cookies = Self.cookies(clock)
        let state = VisitorState(profileId: "returning", consent: true)
        let header = "\(cookies.name)=\(cookies.value(for: state))"
        let lifetime = Double(VisitorCookies.maxAge) * 1000
        let service = OptimizationService(config: OptimizationConfig(clientId: "org-1"), environment: .init(clock: clock))
        func responseCookie() -> String? {
            OptimizationRequestState(service: service, cookies: cookies, cookieHeader: header, logger: Self.quiet) { visitorState in
                RequestOptions(visitorState: visitorState, host: nil, path: "/", query: nil, acceptLanguage: nil, userAgent: nil)
            }.setCookieHeader(with: cookies)
        }
        #expect(try #require(cookies.codec.openWithExpiry(cookies.value(for: state))).expiresAt == clock.now() + lifetime)
        clock.advance(by: .milliseconds(Int64(lifetime / 2) - 1))
        #expect(!cookies.read(cookieHeader: header).renewalDue)
        #expect(responseCookie() == nil, "unchanged, more than half its lifetime left: the browser keeps its cookie")
        clock.advance(by: .milliseconds(2))
        #expect(cookies.read(cookieHeader: header).renewalDue)
        let renewed = try #require(responseCookie(), "less than half left: sealed again although unchanged")
        #expect(cookies.state(inSetCookieHeaders: [renewed]) == state)
        let value = String(renewed.prefix { $0 != ";" }.dropFirst(cookies.name.count + 1))
        #expect(try #require(cookies.codec.openWithExpiry(value)).expiresAt == clock.now() + lifetime, "a whole lifetime from now")
    }

    @Test func anOversizedStateIsStoredWithoutItsSelections() throws {
        let cookies = Self.cookies()
        let huge = try SelectedOptimizations((0..<400).map { index -> JSONValue in
            ["experienceId": .string("experience-\(index)"), "variantIndex": 1, "variants": [:]]
        })
        let value = cookies.value(for: VisitorState(profileId: "big", consent: true, selections: huge))
        #expect(value.utf8.count <= VisitorCookies.maximumCookieLength)
        #expect(cookies.codec.open(value) == VisitorState(profileId: "big", consent: true))
    }

    @Test(arguments: [
        (nil, nil, nil, false), ("same-origin", "https://evil.example", nil, true), ("none", nil, nil, true),
        ("same-site", nil, nil, false), ("cross-site", nil, nil, false), (nil, "http://shop.example:8080", nil, true),
        (nil, "http://shop.example", nil, false), (nil, "null", nil, false), (nil, "https://user@shop.example:8080", nil, false),
        (nil, nil, "https://SHOP.example:8080/form?x", true), (nil, nil, "https://other.example/", false),
    ] as [(String?, String?, String?, Bool)])
    func theSameSiteRule(secFetchSite: String?, origin: String?, referer: String?, allowed: Bool) {
        #expect(CrossSiteRequestCheck.isSameSite(secFetchSite: secFetchSite, origin: origin, referer: referer, host: "shop.example:8080") == allowed)
    }

    @Test func aRequestNamingNoSiteIsAcceptedOnlyWhenConfiguredSoAndTheOtherRulesStillHold() {
        #expect(CrossSiteRequestCheck.isSameSite(secFetchSite: nil, origin: nil, referer: nil, host: "shop.example", acceptsRequestsWithoutSiteHeaders: true))
        #expect(!CrossSiteRequestCheck.isSameSite(secFetchSite: "cross-site", origin: nil, referer: nil, host: "shop.example", acceptsRequestsWithoutSiteHeaders: true))
        #expect(!CrossSiteRequestCheck.isSameSite(secFetchSite: nil, origin: "https://evil.example", referer: nil, host: "shop.example", acceptsRequestsWithoutSiteHeaders: true))
    }

    @Test func aRequestWithoutAHostCannotNameItself() {
        #expect(!CrossSiteRequestCheck.isSameSite(secFetchSite: nil, origin: "http://localhost", referer: nil, host: nil))
    }

    @Test func theConsentFormAcceptsOrDeclinesAndNothingElse() {
        #expect(ConsentChoice(formBody: Array("consent=accept".utf8)) == .accept)
        #expect(ConsentChoice(formBody: Array("other=x&consent=decline".utf8)) == .decline)
        #expect(ConsentChoice(formBody: Array("consent=accept&consent=decline".utf8)) == .decline, "the last wins")
        #expect(ConsentChoice(formBody: Array("consent=%61ccept".utf8)) == .accept, "percent escapes decoded")
        for bad in ["", "consent=", "consent=yes", "accept", "consent=accept+now", "%ZZ=1"] {
            #expect(ConsentChoice(formBody: Array(bad.utf8)) == nil, "\(bad)")
        }
        #expect(ConsentChoice(formBody: [0xFF, 0xFE]) == nil, "not UTF-8")
        let known = VisitorState(profileId: "p", consent: nil, selections: nil)
        let accepted = ConsentChoice.accept.applied(to: known)
        #expect(accepted.profileId == "p" && accepted.consent == true && accepted.selections == nil)
        #expect(accepted.nonce.map(VisitorNonce.isWellFormed) == true, "accepting gives the visitor a nonce")
        #expect(ConsentChoice.accept.applied(to: accepted).nonce == accepted.nonce, "and keeps the one it has")
        #expect(ConsentChoice.decline.applied(to: accepted) == VisitorState(consent: false, nonce: accepted.nonce), "declining forgets the profile, keeps the nonce")
    }

    @Test func aReplayTicketOpensOnlyWithItsPurposeAndBeforeItExpires() throws {
        let clock = ManualClock()
        let tickets = OptimizationReplayTickets(keys: Self.keys, lifetime: .seconds(60), clock: clock)
        let replay = OptimizationHandoff.Replay(routeKey: "/first", events: [["type": "page"]], locale: "de-DE")
        let nonce = VisitorNonce.make()
        let sealed = try #require(tickets.issue(replay, visitorNonce: nonce))
        let ticket = try #require(ReplayTicket(sealed: sealed, codec: tickets.codec))
        #expect(ticket.visitorNonce == nonce && ticket.replay == replay && ticket.id.count == 32)
        #expect(ticket.issuer == tickets.issuer && tickets.issuer != nil, "a ledger of this process: the ticket names its issuer")
        #expect(ReplayTicket(sealed: Self.cookies(clock).value(for: VisitorState(consent: true)), codec: tickets.codec) == nil, "visitor state is no ticket")
        clock.advance(by: .seconds(60))
        #expect(ReplayTicket(sealed: sealed, codec: tickets.codec) == nil, "expired")
    }

    @Test func theLedgerClaimsEachIdOnceUntilItsRecordExpires() {
        let clock = ManualClock()
        let ledger = InMemoryReplayLedger(retention: .seconds(10), capacity: 2, clock: clock)
        #expect(ledger.claim("a") == .claimed)
        #expect(ledger.claim("a") == .alreadyCommitted)
        #expect(ledger.claim("b") == .claimed)
        #expect(ledger.claim("c") == .full)
        clock.advance(by: .seconds(10))
        #expect(ledger.claim("c") == .claimed && ledger.count == 1, "expired records make room")
    }

    @Test func theReplayBodyAndTheOutcomesStatuses() {
        #expect(OptimizationReplayTickets.ticketText(inRequestBody: Array(#"{"ticket":"v1.a.b"}"#.utf8)) == "v1.a.b")
        for bad in [#"{"ticket":1}"#, "[]", "ticket", ""] {
            #expect(OptimizationReplayTickets.ticketText(inRequestBody: Array(bad.utf8)) == nil, "\(bad)")
        }
        let statuses: [OptimizationReplayTickets.CommitOutcome: Int] = [
            .committed: 204, .invalidTicket: 403, .otherVisitor: 403, .blockedByConsent: 403,
            .alreadyCommitted: 409, .ledgerFull: 503, .ledgerUnavailable: 503, .invalidReplay: 422, .notDelivered: 502,
        ]
        for (outcome, status) in statuses { #expect(outcome.statusCode == status) }
    }

    @Test func theWebhookReceiverInvalidatesOnlyAuthenticatedWebhooks() async throws {
        let secret = String(repeating: "w", count: 64)
        let clock = ManualClock(start: 1_700_000_000_000)
        let invalidated = SendableRecorder<String>()
        let receiver = ContentfulWebhookReceiver(authentication: try .signed(secret: secret), clock: clock) { id in
            guard id != "not-an-id!" else { throw ContentfulDeliveryError.invalidEntryId }
            invalidated.append(id)
        }
        func webhook(_ body: String) -> ContentfulWebhookRequest {
            ContentfulWebhookRequest(method: "POST", path: "/hook?x=1", headers: [(name: "content-type", value: "application/json")], body: Array(body.utf8))
        }
        let signer = try ContentfulWebhookSigner(secret: secret)
        let now = Int64(clock.now())
        #expect(try await receiver.receive(signer.signed(webhook(#"{"sys":{"id":"e1"}}"#), timestamp: now), logger: Self.quiet) == .invalidated(id: "e1"))
        #expect(try await receiver.receive(webhook(#"{"sys":{"id":"e2"}}"#), logger: Self.quiet) == .unauthenticated)
        #expect(try await receiver.receive(signer.signed(webhook(#"{"sys":{}}"#), timestamp: now), logger: Self.quiet) == .unprocessable)
        #expect(try await receiver.receive(signer.signed(webhook(#"{"sys":{"id":"not-an-id!"}}"#), timestamp: now), logger: Self.quiet) == .unprocessable)
        #expect(invalidated.all == ["e1"])
        #expect([ContentfulWebhookReceiver.Outcome.invalidated(id: "x"), .unauthenticated, .unprocessable].map(\.statusCode) == [204, 401, 422])
        let open = ContentfulWebhookReceiver(authentication: .insecureUnsigned) { invalidated.append($0) }
        #expect(try await open.receive(webhook(#"{"sys":{"id":"e3"}}"#), logger: Self.quiet) == .invalidated(id: "e3"))
    }

    @Test func theOptionsOfAnHTTPRequestComeFromTheStateAndTheHeaders() {
        let state = VisitorState(profileId: "p9", consent: false)
        let options = RequestOptions(
            visitorState: state, host: "shop.example", path: "/a", query: "b=1",
            acceptLanguage: "de-CH,de;q=0.9", userAgent: "agent/1", requestId: "r1")
        #expect(options.profileId == "p9" && options.locale == "de-CH" && options.requestId == "r1")
        #expect(options.consent == RequestConsent(events: false, persistence: false))
        #expect(options.eventContext["page"]?["url"] == "http://shop.example/a?b=1")
        #expect(options.eventContext["page"]?["search"] == "?b=1")
        #expect(options.eventContext["userAgent"] == "agent/1")
        for unusable in ["*", "x", "<script>", String(repeating: "a", count: 40), "", ",", " ;q=1", "  , de", "dé-DE", "de DE"] {
            #expect(RequestOptions(visitorState: state, host: nil, path: "/", query: nil, acceptLanguage: unusable, userAgent: nil).locale == nil, "\(unusable)")
        }
    }

    @Test func theLocaleIsTheFirstLanguageRangeOfAcceptLanguageWithoutItsParametersOrSpaces() {
        let state = VisitorState(profileId: "p9", consent: true)
        let cases: [(String, String)] = [
            ("de-CH", "de-CH"), ("  fr-CA\t;q=0.8, en", "fr-CA"), (",,en_GB;q=1", "en_GB"), ("pt-BR;q=0.9,*", "pt-BR"), ("\tzh-Hant-TW ", "zh-Hant-TW"),
        ]
        for (header, locale) in cases {
            #expect(RequestOptions(visitorState: state, host: nil, path: "/", query: nil, acceptLanguage: header, userAgent: nil).locale == locale, "\(header)")
        }
    }

    @Test func theOFREPHelpersFindThePathAndForbidCaching() {
        #expect(OFREPEvaluator.evaluatorPath(ofReceivedPath: "/api/ofrep/v1/evaluate/flags/a%2Fb") == "/ofrep/v1/evaluate/flags/a%2Fb")
        #expect(OFREPEvaluator.evaluatorPath(ofReceivedPath: "/elsewhere") == "/elsewhere")
        let headers = OFREPResponse(status: 200, headers: ["ETag": "\"1\"", "cache-control": "max-age=60"]).httpHeaders
        #expect(headers.map(\.name) == ["ETag", "Cache-Control"])
        #expect(headers.last?.value == "no-store")
    }
}
