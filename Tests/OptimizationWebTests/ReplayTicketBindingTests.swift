import Logging
import Synchronization
import Optimization
import OptimizationTesting
import OptimizationTestSupport
import Testing

/// Replay tickets commit once and only for their visitor: bound to the visitor's nonce (never to
/// an optional profile id), to the issuing process when the ledger is the process's own, with a
/// bounded route key, and a ledger whose expired records leave in one step.
@Suite struct ReplayTicketBindingTests {
    static let keys = WebIntegrationFixtures.keys
    static let quiet = Logger(label: "replay-tests", factory: { _ in SwiftLogNoOpLogHandler() })
    static let replay = OptimizationHandoff.Replay(routeKey: "/first", events: [["type": "page", "messageId": "m1"]], locale: nil)

    /// A request of a service that is never started: every refusal happens before the engine.
    static func request(_ state: VisitorState) -> OptimizationRequest {
        OptimizationService(config: OptimizationConfig(clientId: "org-1")).forRequest(RequestOptions(profileId: state.profileId))
    }

    @Test func aTicketOfAVisitorWithoutAProfileIsRefusedToAnotherSuchVisitor() async throws {
        let tickets = OptimizationReplayTickets(keys: Self.keys, clock: ManualClock())
        let ownerNonce = VisitorNonce.make()
        let ticket = try #require(tickets.issue(Self.replay, visitorNonce: ownerNonce))
        // Neither has a profile id: the old binding compared nil with nil.
        for other in [VisitorState(consent: true), VisitorState(consent: true, nonce: VisitorNonce.make())] {
            let outcome = await tickets.commit(ticket, for: Self.request(other), visitorState: other, logger: Self.quiet)
            #expect(outcome == .otherVisitor)
        }
        #expect((tickets.ledger as? InMemoryReplayLedger)?.count == 0, "a refused ticket is not spent")
    }

    @Test func aProcessLedgerBindsTicketsToTheProcessSoARestartOrAnotherReplicaRefusesThem() async throws {
        let clock = ManualClock()
        let before = OptimizationReplayTickets(keys: Self.keys, clock: clock)
        let ownerNonce = VisitorNonce.make()
        let owner = VisitorState(consent: true, nonce: ownerNonce)
        let ticket = try #require(before.issue(Self.replay, visitorNonce: ownerNonce))
        // The same keys in a new process (a restart, or a second replica): its own ledger is empty.
        let after = OptimizationReplayTickets(keys: Self.keys, clock: clock)
        #expect(before.issuer != after.issuer)
        let outcome = await after.commit(ticket, for: Self.request(owner), visitorState: owner, logger: Self.quiet)
        #expect(outcome == .invalidTicket)
        #expect((after.ledger as? InMemoryReplayLedger)?.count == 0)
    }

    @Test func aSharedLedgerLetsAnyReplicaCommitATicketOnce() async throws {
        let clock = ManualClock()
        let shared = SharedTestLedger()
        let codec = SignedValueCodec(keys: Self.keys, purpose: ReplayTicket.purpose, lifetime: .seconds(600), clock: clock)
        let replicaA = OptimizationReplayTickets(codec: codec, ledger: shared)
        let replicaB = OptimizationReplayTickets(codec: codec, ledger: shared)
        #expect(replicaA.issuer == nil && replicaB.issuer == nil)
        let ownerNonce = VisitorNonce.make()
        let owner = VisitorState(consent: true, nonce: ownerNonce)
        let ticket = try #require(replicaA.issue(Self.replay, visitorNonce: ownerNonce))
        let opened = try #require(ReplayTicket(sealed: ticket, codec: codec))
        #expect(try await shared.claim(opened.id) == .claimed, "A committed it")
        let outcome = await replicaB.commit(ticket, for: Self.request(owner), visitorState: owner, logger: Self.quiet)
        #expect(outcome == .alreadyCommitted)
        shared.failing = true
        let other = try #require(replicaA.issue(Self.replay, visitorNonce: ownerNonce))
        #expect(await replicaB.commit(other, for: Self.request(owner), visitorState: owner, logger: Self.quiet) == .ledgerUnavailable)
    }

    @Test func aLongRouteKeyLosesItsQueryAndEveryIssuedTicketOpens() throws {
        let tickets = OptimizationReplayTickets(keys: Self.keys, clock: ManualClock())
        let nonce = VisitorNonce.make()
        var replay = Self.replay
        replay.routeKey = "/first?" + String(repeating: "q", count: 20_000)
        let sealed = try #require(tickets.issue(replay, visitorNonce: nonce))
        let opened = try #require(ReplayTicket(sealed: sealed, codec: tickets.codec), "an issued ticket opens")
        #expect(opened.replay.routeKey == "/first")
        replay.routeKey = "/" + String(repeating: "p", count: OptimizationReplayTickets.maximumRouteKeyBytes)
        #expect(tickets.issue(replay, visitorNonce: nonce) == nil, "a path too long for a ticket gets none")
        // Events too large for the codec to open again: no ticket rather than one that never commits.
        replay.routeKey = "/first"
        replay.events = [["type": "page", "properties": ["padding": .string(String(repeating: "x", count: 20_000))]]]
        #expect(tickets.issue(replay, visitorNonce: nonce) == nil)
        #expect(tickets.issue(Self.replay, visitorNonce: "not-a-nonce") == nil)
    }

    @Test func theProcessLedgerRemovesEveryExpiredRecordInOneClaim() {
        let clock = ManualClock()
        let ledger = InMemoryReplayLedger(retention: .seconds(600), capacity: 100_000, clock: clock)
        var claimed = 0
        for index in 0..<50_000 where ledger.claim("t\(index)") == .claimed { claimed += 1 }
        #expect(claimed == 50_000)
        clock.advance(by: .seconds(300))
        #expect(ledger.claim("late") == .claimed)
        clock.advance(by: .seconds(300))
        #expect(ledger.claim("next") == .claimed)
        #expect(ledger.count == 2, "the 50,000 expired records left at once; the later one stays")
        #expect(ledger.claim("late") == .alreadyCommitted)
    }

    @Test func theNonceIsSealedInTheStateAndAMalformedOneIsRefused() throws {
        let clock = ManualClock()
        let codec = VisitorStateCodec(keys: Self.keys, lifetime: .seconds(600), clock: clock)
        let state = VisitorState(consent: false, nonce: VisitorNonce.make())
        #expect(codec.open(codec.seal(state)) == state)
        #expect(codec.open(codec.seal(VisitorState(consent: true, nonce: "short"))) == VisitorState(consent: true), "a malformed nonce is left out")
        let forger = SignedValueCodec(keys: Self.keys, purpose: VisitorStateCodec.purpose, lifetime: .seconds(600), clock: clock)
        #expect(codec.open(try forger.seal(["c": true, "n": "x"])) == nil)
        #expect(codec.open(try forger.seal(["c": true, "n": 5])) == nil)
        #expect(VisitorNonce.isWellFormed(VisitorNonce.make()) && VisitorNonce.make() != VisitorNonce.make())
    }

    @Test func aRequestIssuesOneNonceThatItsResponseStateCarries() {
        let service = OptimizationService(config: OptimizationConfig(clientId: "org-1"))
        let fresh = OptimizationRequestState(request: service.forRequest(RequestOptions()), visitorState: VisitorState(), cookieWasRejected: false)
        #expect(fresh.responseVisitorState.nonce == nil, "no nonce until one is needed")
        let nonce = fresh.visitorNonce()
        #expect(fresh.visitorNonce() == nonce && fresh.responseVisitorState.nonce == nonce)
        fresh.store(VisitorState(consent: true))
        #expect(fresh.responseVisitorState.nonce == nonce, "a stored state keeps the issued nonce")
        let known = VisitorState(consent: true, nonce: VisitorNonce.make())
        let returning = OptimizationRequestState(request: service.forRequest(RequestOptions()), visitorState: known, cookieWasRejected: false)
        #expect(returning.visitorNonce() == known.nonce)
    }
}

/// A ledger shared by several `OptimizationReplayTickets` (as a database table would be).
final class SharedTestLedger: ReplayLedger {
    private let state = Mutex<(ids: Set<String>, failing: Bool)>(([], false))

    var isSharedAcrossProcesses: Bool { true }

    /// When true, claims throw (the database is away).
    var failing: Bool {
        get { state.withLock { $0.failing } }
        set { state.withLock { $0.failing = newValue } }
    }

    func claim(_ id: String) async throws -> ReplayClaim {
        try state.withLock { state in
            if state.failing { throw SharedTestLedgerError.unreachable }
            return state.ids.insert(id).inserted ? .claimed : .alreadyCommitted
        }
    }
}

enum SharedTestLedgerError: Error { case unreachable }
