import Optimization
import OptimizationTesting
import Testing

/// ``ReplayIssuanceLimit``: tickets per client per window.
@Suite struct ReplayIssuanceLimitTests {
    @Test func aClientPastItsBoundGetsNoTicketUntilItsWindowPassesAndOthersAreNotHeld() throws {
        let clock = ManualClock()
        let limit = ReplayIssuanceLimit(ticketsPerWindow: 3, window: .seconds(60), clock: clock)
        let tickets = OptimizationReplayTickets(
            codec: SignedValueCodec(keys: WebIntegrationFixtures.keys, purpose: ReplayTicket.purpose, lifetime: .seconds(600), clock: clock),
            ledger: InMemoryReplayLedger(retention: .seconds(600), capacity: 10, clock: clock), issuanceLimit: limit)
        let replay = ReplayTicketBindingTests.replay
        for _ in 0..<3 { #expect(tickets.issue(replay, visitorNonce: VisitorNonce.make(), client: "10.0.0.1") != nil) }
        #expect(tickets.issue(replay, visitorNonce: VisitorNonce.make(), client: "10.0.0.1") == nil, "the fourth in the window")
        #expect(tickets.issue(replay, visitorNonce: VisitorNonce.make(), client: "10.0.0.2") != nil, "another client")
        #expect(tickets.issue(replay, visitorNonce: VisitorNonce.make()) != nil, "no client key: not counted")
        clock.advance(by: .seconds(60))
        #expect(tickets.issue(replay, visitorNonce: VisitorNonce.make(), client: "10.0.0.1") != nil, "a new window")
        #expect(limit.clientCount == 1, "the expired windows left at once")
    }

    @Test func theTrackedClientsAreBounded() {
        let limit = ReplayIssuanceLimit(ticketsPerWindow: 1, window: .seconds(60), maximumClients: 100, clock: ManualClock())
        for index in 0..<1_000 { _ = limit.admit(client: "client-\(index)") }
        #expect(limit.clientCount == 100)
        #expect(limit.admit(client: "client-999") == false && limit.admit(client: "client-0") == true, "the oldest left first")
    }
}
