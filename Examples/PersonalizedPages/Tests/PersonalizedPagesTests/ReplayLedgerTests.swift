import JavaScriptHost
import Optimization
import OptimizationHummingbird
import PersonalizedPagesApp
import Testing

@Suite(.hangBound) struct ReplayLedgerTests {
    @Test func anIdIsClaimedOnceWhileKeptAndTheLedgerIsBounded() {
        let clock = ManualClock()
        let ledger = InMemoryReplayLedger(retention: .seconds(600), capacity: 2, clock: clock)
        #expect(ledger.claim("a") == .claimed)
        #expect(ledger.claim("a") == .alreadyCommitted)
        clock.advance(by: .seconds(1))
        #expect(ledger.claim("b") == .claimed)
        #expect(ledger.claim("c") == .full, "two unexpired ids held: nothing evicted early")
        #expect(ledger.claim("b") == .alreadyCommitted)
        clock.advance(by: .seconds(599))
        #expect(ledger.claim("c") == .claimed, "a expired and made room")
        #expect(ledger.count == 2)
        clock.advance(by: .seconds(1))
        #expect(ledger.claim("a") == .claimed, "kept for its retention only: the ticket it stood for has expired")
    }

    @Test func aTicketOpensOnlyWithItsCodecAndKeepsItsReplay() throws {
        let keys = try VisitorStateKeys(base64Encoded: [TestVisitorState.key])
        let clock = ManualClock()
        let codec = SignedValueCodec(keys: keys, purpose: ReplayTicket.purpose, lifetime: .seconds(600), clock: clock)
        let ticket = ReplayTicket(visitorNonce: VisitorNonce.make(), replay: .init(routeKey: "/first", events: [["type": "page", "messageId": "m1"]], locale: "de-DE"))
        #expect(ticket.id.count == 32 && ticket.id != ReplayTicket(visitorNonce: ticket.visitorNonce, replay: ticket.replay).id)
        let sealed = try #require(ticket.sealed(with: codec))
        #expect(ReplayTicket(sealed: sealed, codec: codec) == ticket)
        let issued = ReplayTicket(visitorNonce: ticket.visitorNonce, issuer: "process-1", replay: ticket.replay)
        #expect(ReplayTicket(sealed: try #require(issued.sealed(with: codec)), codec: codec) == issued)
        let stateCodec = SignedValueCodec(keys: keys, purpose: VisitorStateCodec.purpose, lifetime: .seconds(600), clock: clock)
        #expect(ReplayTicket(sealed: sealed, codec: stateCodec) == nil, "another purpose")
        clock.advance(by: .seconds(600))
        #expect(ReplayTicket(sealed: sealed, codec: codec) == nil, "expired")
    }
}
