import Foundation
import Optimization
@testable import OptimizationContent
import OptimizationTesting
import OptimizationTestSupport
import Testing

/// The negative cache of ``ContentfulDeliverySource`` (issue 46, F9): an id the CDA answered it
/// does not have is not asked again within the policy's `notFoundTimeToLive`, on the injected
/// clock, so `GET /cms/<random id>` in a loop cannot spend the space's rate limit.
@Suite("ContentfulDeliverySource: unknown ids (negative cache)")
struct ContentfulUnknownEntryTests {
    @Test func anUnknownIdIsAskedOncePerTimeToLive() async throws {
        let clock = ManualClock()
        try await withLocalCDAServer { server in
            try await withCDASource(server, clock: clock) { source in
                for _ in 0..<3 {
                    await #expect(throws: ContentfulDeliveryError.entryNotFound(id: "no-such-entry")) {
                        try await source.entry(id: "no-such-entry")
                    }
                }
                #expect(server.entryRequests.count == 1, "one CDA call for three asks within the TTL")
                clock.advance(by: .milliseconds(29_999))
                await #expect(throws: ContentfulDeliveryError.entryNotFound(id: "no-such-entry")) {
                    try await source.entry(id: "no-such-entry")
                }
                #expect(server.entryRequests.count == 1)
                clock.advance(by: .milliseconds(1))
                await #expect(throws: ContentfulDeliveryError.entryNotFound(id: "no-such-entry")) {
                    try await source.entry(id: "no-such-entry")
                }
                #expect(server.entryRequests.count == 2, "after the TTL the id is asked again")
                // Another locale is another question.
                _ = try? await source.entry(id: "no-such-entry", locale: "en-US")
                #expect(server.entryRequests.count == 3)
            }
        }
    }

    @Test func aBatchDoesNotAskIdsRecentlyMissing() async throws {
        let clock = ManualClock()
        try await withLocalCDAServer { server in
            try await withCDASource(server, clock: clock) { source in
                let first = try await source.entries(ids: ["hero-home", "missing-1", "missing-2"])
                #expect(first.missingIds == ["missing-1", "missing-2"])
                #expect(server.entryRequests.count == 1)
                let again = try await source.entries(ids: ["missing-2", "hero-home", "missing-1"])
                #expect(again.entries.map(\.id) == ["hero-home"] && again.missingIds == ["missing-2", "missing-1"])
                await #expect(throws: ContentfulDeliveryError.entryNotFound(id: "missing-1")) {
                    try await source.entry(id: "missing-1")
                }
                #expect(server.entryRequests.count == 1, "the missing ids are known, the entry is cached")
            }
        }
    }

    @Test func invalidatingAnIdForgetsItAsMissing() async throws {
        let clock = ManualClock()
        try await withLocalCDAServer { server in
            let hero = try #require(server.space.entry(id: "hero-home"))
            server.space.removeEntry(id: "hero-home")
            try await withCDASource(server, clock: clock) { source in
                await #expect(throws: ContentfulDeliveryError.entryNotFound(id: "hero-home")) {
                    try await source.entry(id: "hero-home")
                }
                // Published again; the publish webhook invalidates it: found at once, within the TTL.
                server.space.put(hero)
                try source.invalidate(entryId: "hero-home")
                let found = try await source.entry(id: "hero-home")
                #expect(found.id == "hero-home")
                #expect(server.entryRequests.count == 2)

                server.space.removeEntry(id: "hero-home")
                source.invalidateAll()
                await #expect(throws: ContentfulDeliveryError.entryNotFound(id: "hero-home")) {
                    try await source.entry(id: "hero-home")
                }
                server.space.put(hero)
                source.invalidateAll()
                let foundAgain = try await source.entry(id: "hero-home")
                #expect(foundAgain.id == "hero-home")
                #expect(server.entryRequests.count == 4)
            }
        }
    }

    @Test func aFailedRequestIsNotRememberedAsMissing() async throws {
        try await withLocalCDAServer { server in
            server.enqueue(.contentfulServerError(503))
            try await withCDASource(server, configure: { $0.maximumAttempts = 1 }) { source in
                do {
                    _ = try await source.entry(id: "no-such-entry")
                    Issue.record("expected the scripted 503")
                } catch let error as ContentfulDeliveryError {
                    #expect(error.isTransient, "\(error)")
                }
                // The failure said nothing about the id: the next ask goes to the CDA.
                await #expect(throws: ContentfulDeliveryError.entryNotFound(id: "no-such-entry")) {
                    try await source.entry(id: "no-such-entry")
                }
                #expect(server.entryRequests.count == 2)
            }
        }
    }

    @Test func aZeroTimeToLiveAsksEveryTime() async throws {
        try await withLocalCDAServer { server in
            try await withCDASource(server, cache: ContentfulCachePolicy(notFoundTimeToLive: .zero)) { source in
                for _ in 0..<2 { _ = try? await source.entry(id: "no-such-entry") }
                #expect(server.entryRequests.count == 2)
            }
        }
    }

    @Test func theRecordIsBoundedAndForgetsTheOldestInBulk() {
        var missing = ContentfulMissingEntries(timeToLive: .seconds(30), capacity: 16)
        func key(_ index: Int) -> ContentfulEntryQuery { ContentfulEntryQuery(selection: .id("id-\(index)"), locale: nil) }
        for index in 0..<1000 { missing.record(key(index), now: Double(index)) }
        #expect(missing.count <= 16)
        #expect(missing.contains(key(999), now: 1000) && !missing.contains(key(0), now: 1000))
        #expect(!missing.contains(key(999), now: 999 + 30_000), "expired after the TTL")
        missing.remove(entryId: "id-999")
        #expect(!missing.contains(key(999), now: 1000))
        var disabled = ContentfulMissingEntries(timeToLive: .seconds(30), capacity: 0)
        disabled.record(key(1), now: 0)
        #expect(disabled.count == 0 && !disabled.contains(key(1), now: 0))
    }
}
