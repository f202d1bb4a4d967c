import Optimization
import Logging
@testable import OptimizationPostgres
import OptimizationTesting
import PostgresTestServer
import Testing

/// `PostgresReplayLedger`: a replay ticket committed by one replica is refused by another and
/// after a restart; expired rows are taken over and removed in bulk.
@Suite struct PostgresReplayLedgerTests {
    static let replay = OptimizationHandoff.Replay(routeKey: "/first", events: [["type": "page", "messageId": "m1"]], locale: nil)

    /// A request of a service that is never started: the ledger refuses before the engine runs.
    static func request() -> OptimizationRequest {
        OptimizationService(config: OptimizationConfig(clientId: "org-1")).forRequest(RequestOptions())
    }

    @Test func aTicketCommittedOnOneReplicaIsRefusedByAnotherAndAfterARestart() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 2) { databases in
                let clock = ManualClock(start: 1_767_225_600_000)
                let codec = SignedValueCodec(keys: WebIntegrationFixtures.keys, purpose: ReplayTicket.purpose, lifetime: .seconds(600), clock: clock)
                let replicaA = OptimizationReplayTickets(codec: codec, ledger: PostgresReplayLedger(database: databases[0], retention: .seconds(600)))
                let replicaB = OptimizationReplayTickets(codec: codec, ledger: PostgresReplayLedger(database: databases[1], retention: .seconds(600)))
                #expect(replicaA.issuer == nil, "a shared ledger: tickets are not bound to a process")
                let nonce = VisitorNonce.make()
                let visitor = VisitorState(consent: true, nonce: nonce)
                let sealed = try #require(replicaA.issue(Self.replay, visitorNonce: nonce))
                let ticket = try #require(ReplayTicket(sealed: sealed, codec: codec))

                #expect(try await replicaA.ledger.claim(ticket.id) == .claimed, "A commits it")
                #expect(await replicaB.commit(sealed, for: Self.request(), visitorState: visitor, logger: quietLogger) == .alreadyCommitted)
                #expect(await replicaA.commit(sealed, for: Self.request(), visitorState: visitor, logger: quietLogger) == .alreadyCommitted)

                // A restarted replica: a new connection and ledger on the same database.
                await databases[0].shutdown()
                let restarted = OptimizationDatabase(configuration: try testConfiguration(server), logger: quietLogger)
                try await restarted.start()
                let afterRestart = OptimizationReplayTickets(codec: codec, ledger: PostgresReplayLedger(database: restarted, retention: .seconds(600)))
                #expect(await afterRestart.commit(sealed, for: Self.request(), visitorState: visitor, logger: quietLogger) == .alreadyCommitted)
                await restarted.shutdown()
            }
        }
    }

    @Test func concurrentClaimsOfOneIdOnTwoReplicasClaimItOnce() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 2) { databases in
                let ledgers = databases.map { PostgresReplayLedger(database: $0, retention: .seconds(600)) }
                for round in 0..<20 {
                    let id = "ticket-\(round)"
                    async let first = ledgers[0].claim(id)
                    async let second = ledgers[1].claim(id)
                    let claims = try await [first, second]
                    #expect(claims.filter { $0 == .claimed }.count == 1, "round \(round): \(claims)")
                }
            }
        }
    }

    @Test func anExpiredRowIsTakenOverAndExpiredRowsAreRemovedInBulk() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 1) { databases in
                let ledger = PostgresReplayLedger(database: databases[0], retention: .seconds(600), pruneInterval: .seconds(3600))
                #expect(try await ledger.claim("kept") == .claimed)
                // Rows whose expiry passed, as tickets claimed long ago leave them.
                try await databases[0].client.query("""
                    INSERT INTO optimization.replay_claims (ticket_id, expires_at)
                    SELECT 'old-' || n, clock_timestamp() - interval '1 second' FROM generate_series(1, 1000) AS n
                    """)
                #expect(try await ledger.claim("old-1") == .claimed, "an expired row is taken over")
                #expect(try await ledger.claim("old-1") == .alreadyCommitted)
                #expect(await ledger.pruneExpired() == 999)
                #expect(try await ledger.claim("kept") == .alreadyCommitted, "unexpired rows stay")
            }
        }
    }

    @Test func aClaimWithoutTheDatabaseThrowsAndTheTicketIsNotSpent() async throws {
        try await withPostgresTestServer { server in
            let database = OptimizationDatabase(configuration: try testConfiguration(server, operationTimeout: .milliseconds(500)), logger: quietLogger)
            try await database.start()
            let clock = ManualClock(start: 1_767_225_600_000)
            let codec = SignedValueCodec(keys: WebIntegrationFixtures.keys, purpose: ReplayTicket.purpose, lifetime: .seconds(600), clock: clock)
            let tickets = OptimizationReplayTickets(codec: codec, ledger: PostgresReplayLedger(database: database, retention: .seconds(600)))
            let nonce = VisitorNonce.make()
            let sealed = try #require(tickets.issue(Self.replay, visitorNonce: nonce))
            server.stop()
            let outcome = await tickets.commit(sealed, for: Self.request(), visitorState: VisitorState(consent: true, nonce: nonce), logger: quietLogger)
            #expect(outcome == .ledgerUnavailable)
            await database.shutdown()
        }
    }
}
