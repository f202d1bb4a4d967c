import Optimization
import Foundation
@testable import OptimizationPostgres
import OptimizationTesting
import PostgresNIO
import PostgresTestServer
import Testing

@Suite struct EntryStoreTests {
    @Test func aStartingReplicaServesFromTheStoreAndARestartedOneDuringACDAOutage() async throws {
        try await withPostgresTestServer { server in
            try await withLocalCDA { cda in
                let a = try await Replica.start(server, cda: cda)
                let hero = try await withReplicas([a]) { _ in try await a.source.entry(id: "hero-home") }
                let batch = try await withReplicas([try await Replica.start(server, cda: cda)]) { replicas in
                    try await replicas[0].source.entries(ids: ["hero-home", "holiday-banner"])
                }
                #expect(batch.entries.first?.text == hero.text)
                #expect(cda.entryRequests.count == 2)   // hero once (by A), the banner once (by B)
                // The CDA goes away; B restarts with an empty memory and serves from the store.
                try await cda.stop()
                let b = try await Replica.start(server, cda: cda)
                try await withReplicas([b]) { (_: [Replica]) async throws in
                    #expect(try await b.source.entry(id: "hero-home").text == hero.text)
                    #expect(try await b.source.entry(id: "holiday-banner").id == "holiday-banner")
                }
                // Copies beyond the time to live are still served while the CDA fails (stale-if-error).
                let short = ContentfulCachePolicy(timeToLive: .milliseconds(1), staleWhileRevalidate: .zero, staleIfError: .seconds(600))
                let c = try await Replica.start(server, cda: cda, cache: short)
                try await withReplicas([c]) { (_: [Replica]) async throws in
                    #expect(try await c.source.entry(id: "hero-home").text == hero.text)
                    await #expect(throws: ContentfulDeliveryError.self) { try await c.source.entry(id: "promo-strip") }
                }
            }
        }
    }

    @Test func concurrentWritersNeverLetAnOlderRevisionReplaceANewerOne() async throws {
        try await withPostgresTestServer { server in
            let databases = try (0..<2).map { _ in OptimizationDatabase(configuration: try testConfiguration(server), logger: quietLogger) }
            for database in databases { try await database.start() }
            let stores = databases.map(PostgresEntryStore.init(database:))
            let key = ContentfulEntryStoreKey(spaceId: "s", environment: "master", locale: "", entryId: "hero")
            func copy(_ revision: Int, include: Int = 1) -> ContentfulStoredEntry {
                ContentfulStoredEntry(key: key, revision: revision, fingerprint: "Entry/hero@\(revision),Entry/variant@\(include)",
                                      referencedIds: ["hero", "variant"], jsonText: #"{"r":\#(revision),"i":\#(include)}"#)
            }
            for seed in 0..<5 {
                var generator = SeededRandomNumberGenerator(seed: UInt64(seed))
                let revisions = Array(1...40).shuffled(using: &generator)
                await withTaskGroup(of: Void.self) { group in
                    for (index, revision) in revisions.enumerated() {
                        let store = stores[index % 2]
                        group.addTask { await store.save([copy(revision + seed * 100)]) }
                    }
                }
                let stored = try #require(await stores[0].entries(for: [key])[key])
                #expect(stored.revision == 40 + seed * 100, "seed \(seed)")
                #expect(stored.jsonText == #"{"r":\#(40 + seed * 100),"i":1}"#)
            }
            // Same item revision: an older include does not replace a newer one.
            await stores[0].save([copy(1000, include: 5)])
            await stores[1].save([copy(1000, include: 4)])
            #expect(await stores[0].entries(for: [key])[key]?.fingerprint == "Entry/hero@1000,Entry/variant@5")
            // An invalidated copy is not cleared by the same content (a fetch from before the invalidation)…
            await stores[0].invalidate(ContentfulInvalidation(spaceId: "s", environment: "master", entryId: "variant"))
            #expect(await stores[1].entries(for: [key])[key]?.isInvalidated == true)
            await stores[1].save([copy(1000, include: 5)])
            #expect(await stores[1].entries(for: [key])[key]?.isInvalidated == true)
            // … but by new content.
            await stores[1].save([copy(1000, include: 6)])
            let renewed = try #require(await stores[1].entries(for: [key])[key])
            #expect(!renewed.isInvalidated && renewed.fingerprint.hasSuffix("@6"))
            for database in databases { await database.shutdown() }
        }
    }

    @Test func replicasFetchOneEntryOnceAtATimeAndAStuckClaimOnlyDelays() async throws {
        try await withPostgresTestServer { server in
            try await withLocalCDA { cda in
                let replicas = [try await Replica.start(server, cda: cda, listen: false), try await Replica.start(server, cda: cda, listen: false)]
                try await withReplicas(replicas) { replicas in
                    cda.enqueue(.delay(.milliseconds(400)), .delay(.milliseconds(400)))
                    let entries = try await withThrowingTaskGroup(of: ContentfulEntry.self) { group in
                        for replica in replicas { group.addTask { try await replica.source.entry(id: "promo-strip") } }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    #expect(entries.count == 2 && entries[0].text == entries[1].text)
                    #expect(cda.entryRequests.count == 1)
                    // A replica stuck holding a claim for an hour delays the others by the claim
                    // timeout only.
                    let schema = replicas[0].database.configuration.schema
                    let claimKey = "local-space\u{1F}master\u{1F}\u{1F}holiday-banner"
                    try await replicas[0].database.client.query("""
                        INSERT INTO \(unescaped: schema).fetch_claims (claim_key, owner, expires_at)
                        VALUES (\(claimKey), 'stuck', clock_timestamp() + interval '1 hour')
                        """)
                    let stuck = try await Replica.start(server, cda: cda, fetchClaimTimeout: .milliseconds(300), listen: false)
                    try await withReplicas([stuck]) { (_: [Replica]) async throws in
                        let started = ContinuousClock.now
                        #expect(try await stuck.source.entry(id: "holiday-banner").id == "holiday-banner")
                        let elapsed = ContinuousClock.now - started
                        #expect(elapsed >= .milliseconds(250) && elapsed < .seconds(10))
                        #expect(cda.entryRequests.count == 2)
                    }
                }
            }
        }
    }
}

