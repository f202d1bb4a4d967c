import Optimization
import Foundation
@testable import OptimizationPostgres
import OptimizationTesting
import PostgresNIO
import PostgresTestServer
import Testing

@Suite struct InvalidationBusTests {
    @Test func anInvalidationOnAChangesWhatBServesWithinOneSecond() async throws {
        try await withPostgresTestServer { server in
            try await withLocalCDA { cda in
                let replicas = [try await Replica.start(server, cda: cda), try await Replica.start(server, cda: cda)]
                try await withReplicas(replicas) { replicas in
                    let (a, b) = (replicas[0], replicas[1])
                    let before = try await b.source.entry(id: "hero-home")
                    _ = try await a.source.entry(id: "hero-home")
                    #expect(cda.entryRequests.count == 1)   // B read A's copy? No: B fetched first; A read B's.
                    // A webhook reaches A for the hero's variant; the CDA has the new revision.
                    #expect(cda.space.publish(entryId: "hero-home-europe", field: "internalTitle", value: "Europe v2"))
                    let started = ContinuousClock.now
                    try a.source.invalidate(entryId: "hero-home-europe")
                    try await waitUntil("B serves the new variant") {
                        try await b.source.entry(id: "hero-home").text.contains("Europe v2")
                    }
                    let elapsed = ContinuousClock.now - started
                    #expect(elapsed < .seconds(1), "took \(elapsed)")
                    #expect(b.bus.receivedCount == 1 && a.bus.receivedCount == 0)   // A does not apply its own twice
                    #expect(try await a.source.entry(id: "hero-home").text.contains("Europe v2"))
                    #expect(try await b.source.entry(id: "hero-home").text != before.text)
                }
            }
        }
    }

    @Test func theDatabaseGoingAwayAndComingBack() async throws {
        try await withPostgresTestServer { server in
            try await withLocalCDA { cda in
                let replicas = [
                    try await Replica.start(server, cda: cda, operationTimeout: .milliseconds(500)),
                    try await Replica.start(server, cda: cda, operationTimeout: .milliseconds(500)),
                ]
                try await withReplicas(replicas) { replicas in
                    let (a, b) = (replicas[0], replicas[1])
                    let hero = try await b.source.entry(id: "hero-home")
                    let banner = try await b.source.entry(id: "holiday-banner")   // stored before the outage
                    server.stop()
                    try await waitUntil("the buses notice") { !a.bus.isListening && !b.bus.isListening }
                    // Requests keep rendering from memory, and uncached entries come from the CDA,
                    // each within the operation bounds.
                    let started = ContinuousClock.now
                    #expect(try await b.source.entry(id: "hero-home") === hero)
                    #expect(try await b.source.entry(id: "promo-strip").id == "promo-strip")
                    #expect(ContinuousClock.now - started < .seconds(10))
                    // An invalidation made while the bus is down is missed by B …
                    #expect(cda.space.publish(entryId: "hero-home", field: "internalTitle", value: "while away"))
                    try a.source.invalidate(entryId: "hero-home")
                    #expect(cda.space.publish(entryId: "holiday-banner", field: "internalTitle", value: "banner while away"))
                    try a.source.invalidate(entryId: "holiday-banner")
                    await a.source.waitForPendingStoreWork()   // kept for a retry: the database is gone
                    #expect(a.store.pendingInvalidationCount == 2)
                    #expect(try await b.source.entry(id: "hero-home") === hero)
                    // … so when it is back, B revalidates: it serves the new revision, not the old.
                    try server.start()
                    try await waitUntil("both buses listen again") { a.bus.listenCount == 2 && b.bus.listenCount == 2 && b.bus.isListening }
                    let after = try await b.source.entry(id: "hero-home")
                    #expect(after.text.contains("while away"))
                    #expect(try #require(revision(after)) > #require(revision(hero)))
                    // A's invalidation was kept and is written once the database is back: a
                    // replica starting now does not take the copy it invalidated as fresh.
                    try await waitUntil("A wrote its kept invalidation") { a.store.pendingInvalidationCount == 0 }
                    let c = try await Replica.start(server, cda: cda)
                    try await withReplicas([c]) { (_: [Replica]) async throws in
                        let fresh = try await c.source.entry(id: "holiday-banner")
                        #expect(fresh.text.contains("banner while away"))
                        #expect(try #require(revision(fresh)) > #require(revision(banner)))
                    }
                    // And invalidations flow again.
                    #expect(cda.space.publish(entryId: "hero-home", field: "internalTitle", value: "after return"))
                    try a.source.invalidate(entryId: "hero-home")
                    try await waitUntil("B serves the newest") { try await b.source.entry(id: "hero-home").text.contains("after return") }
                }
            }
        }
    }
}
