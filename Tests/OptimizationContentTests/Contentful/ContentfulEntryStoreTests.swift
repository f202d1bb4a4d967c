import Foundation
import JavaScriptHost
import Logging
@testable import OptimizationContent
import OptimizationTesting
import Synchronization
import Testing
import OptimizationTestSupport

/// An in-memory ``ContentfulEntryStore`` shared by several sources (the replicas of a test), with
/// the protocol's guards, ages on `clock`, and everything it was asked recorded.
final class MemoryEntryStore: ContentfulEntryStore {
    struct Row {
        var entry: ContentfulStoredEntry
        var writtenAt: Double
    }
    struct State {
        var rows: [ContentfulEntryStoreKey: Row] = [:]
        var invalidations: [ContentfulInvalidation] = []
        var claims: [ContentfulEntryStoreKey] = []
        var reads = 0
    }
    let clock: ManualClock
    let state = Mutex(State())
    /// While set, `invalidate` waits for it (an invalidation still on its way to the store).
    let invalidationGate = Mutex<CheckedContinuation<Void, Never>?>(nil)
    let holdInvalidations: Bool

    init(clock: ManualClock, holdInvalidations: Bool = false) {
        self.clock = clock
        self.holdInvalidations = holdInvalidations
    }

    func entries(for keys: [ContentfulEntryStoreKey]) async -> [ContentfulEntryStoreKey: ContentfulStoredEntry] {
        let now = clock.now()
        return state.withLock { state in
            state.reads += 1
            var found: [ContentfulEntryStoreKey: ContentfulStoredEntry] = [:]
            for key in keys {
                if let row = state.rows[key] {
                    var entry = row.entry
                    entry.age = .milliseconds(now - row.writtenAt)
                    found[key] = entry
                }
            }
            return found
        }
    }

    func save(_ entries: [ContentfulStoredEntry]) async {
        let now = clock.now()
        state.withLock { state in
            for entry in entries {
                if let old = state.rows[entry.key]?.entry {
                    if entry.revision < old.revision { continue }
                    if old.isInvalidated, entry.revision == old.revision, entry.fingerprint == old.fingerprint { continue }
                }
                var stored = entry
                stored.isInvalidated = false
                state.rows[entry.key] = Row(entry: stored, writtenAt: now)
            }
        }
    }

    func withFetchClaim<Result: Sendable>(
        for key: ContentfulEntryStoreKey,
        _ fetch: (ContentfulStoredEntry?) async -> (result: Result, writeBack: ContentfulStoredEntry?)
    ) async -> Result {
        state.withLock { $0.claims.append(key) }
        let current = await entries(for: [key])[key]
        let (result, writeBack) = await fetch(current)
        if let writeBack { await save([writeBack]) }
        return result
    }

    func invalidate(_ invalidation: ContentfulInvalidation) async {
        if holdInvalidations {
            await withCheckedContinuation { continuation in invalidationGate.withLock { $0 = continuation } }
        }
        state.withLock { state in
            state.invalidations.append(invalidation)
            for (key, row) in state.rows where key.spaceId == invalidation.spaceId && key.environment == invalidation.environment {
                if let id = invalidation.entryId, !(row.entry.referencedIds.contains(id) || key.entryId == id) { continue }
                state.rows[key]?.entry.isInvalidated = true
            }
        }
    }

    /// Lets a held invalidation reach the rows.
    func releaseInvalidation() async throws {
        // Only catches a hang: longer than a whole run of the suite, whose tests all start at once
        // and can queue the invalidation's task behind every other test's work.
        let deadline = ContinuousClock.now + hangBound
        while ContinuousClock.now < deadline {
            if let continuation = invalidationGate.withLock({ gate -> CheckedContinuation<Void, Never>? in defer { gate = nil }; return gate }) {
                continuation.resume()
                return
            }
            await Task.yield()
        }
        Issue.record("no invalidation arrived at the store")
    }

    /// Overwrites a row as another writer would (no guard): for building test situations.
    func force(_ entry: ContentfulStoredEntry, age: Duration = .zero) {
        let now = clock.now()
        state.withLock { $0.rows[entry.key] = Row(entry: entry, writtenAt: now - age.inMilliseconds) }
    }

    func row(_ id: String) -> ContentfulStoredEntry? {
        state.withLock { $0.rows.first { $0.key.entryId == id }?.value.entry }
    }
}

/// A source on `server` with `store`, shut down after `body`.
func withStoreSource<T>(
    _ server: LocalContentfulDeliveryServer, store: MemoryEntryStore,
    cache: ContentfulCachePolicy = ContentfulCachePolicy(), api: ContentfulDeliveryConfiguration.API = .delivery,
    _ body: (ContentfulDeliverySource) async throws -> T
) async throws -> T {
    let configuration = ContentfulDeliveryConfiguration(
        spaceId: server.space.spaceId, accessToken: server.space.accessToken, api: api, baseURL: server.baseURL,
        requestTimeout: .milliseconds(3000), maximumAttempts: 1)
    let source = try ContentfulDeliverySource(
        configuration: configuration, cachePolicy: cache, clock: store.clock, entryStore: store,
        logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    do {
        let result = try await body(source)
        await source.shutdown()
        return result
    } catch {
        await source.shutdown()
        throw error
    }
}

private func revision(_ entry: ContentfulEntry) -> Int? {
    entry.document["items"]?.arrayValue?.first?["sys"]?["revision"]?.intValue
}

@Suite struct ContentfulEntryStoreTests {
    @Test func aStartingReplicaServesFromTheStoreWithoutAskingTheCDA() async throws {
        try await withLocalCDAServer { server in
            let store = MemoryEntryStore(clock: ManualClock())
            let first = try await withStoreSource(server, store: store) { try await $0.entry(id: "hero-home") }
            #expect(server.entryRequests.count == 1)
            let row = try #require(store.row("hero-home"))
            #expect(row.revision == revision(first) && row.referencedIds.contains("hero-home-europe") && !row.isInvalidated)
            // A second replica (a new source, empty memory) serves the stored copy: no request.
            let second = try await withStoreSource(server, store: store) { try await $0.entry(id: "hero-home") }
            #expect(second.jsonText == first.jsonText)
            #expect(server.entryRequests.count == 1)
            // Batches read through the store too, and write back what they fetched.
            let batch = try await withStoreSource(server, store: store) { try await $0.entries(ids: ["hero-home", "holiday-banner", "promo-strip"]) }
            #expect(batch.entries.map(\.id) == ["hero-home", "holiday-banner", "promo-strip"])
            #expect(server.entryRequests.count == 2)
            #expect(store.row("promo-strip") != nil && store.row("holiday-banner") != nil)
        }
    }

    @Test func aCopyOlderThanTheTimeToLiveIsRefetchedAndServedOnlyWhenTheCDAFails() async throws {
        try await withLocalCDAServer { server in
            let clock = ManualClock()
            let store = MemoryEntryStore(clock: clock)
            let policy = ContentfulCachePolicy(timeToLive: .seconds(60), staleWhileRevalidate: .zero, staleIfError: .seconds(600))
            _ = try await withStoreSource(server, store: store, cache: policy) { try await $0.entry(id: "hero-home") }
            clock.advance(by: .seconds(120))
            _ = try await withStoreSource(server, store: store, cache: policy) { try await $0.entry(id: "hero-home") }
            #expect(server.entryRequests.count == 2)   // too old to be fresh: asked again, written back
            clock.advance(by: .seconds(120))
            try await server.stop()                     // the CDA is gone
            let served = try await withStoreSource(server, store: store, cache: policy) { try await $0.entry(id: "hero-home") }
            #expect(served.id == "hero-home")
            clock.advance(by: .seconds(600))            // beyond stale-if-error: nothing to serve
            await #expect(throws: ContentfulDeliveryError.self) {
                try await withStoreSource(server, store: store, cache: policy) { try await $0.entry(id: "hero-home") }
            }
        }
    }

    @Test func invalidationsReachTheStoreAndAnInvalidatedCopyIsNotServedFresh() async throws {
        try await withLocalCDAServer { server in
            let store = MemoryEntryStore(clock: ManualClock())
            try await withStoreSource(server, store: store) { source in
                _ = try await source.entry(id: "hero-home")
                try source.invalidate(entryId: "hero-home-europe")   // a variant the hero includes
                source.invalidateAll()
                await source.waitForPendingStoreWork()
            }
            let invalidations = store.state.withLock { $0.invalidations }
            #expect(invalidations == [
                ContentfulInvalidation(spaceId: "local-space", environment: "master", entryId: "hero-home-europe"),
                ContentfulInvalidation(spaceId: "local-space", environment: "master", entryId: nil),
            ])
            #expect(store.row("hero-home")?.isInvalidated == true)
            server.space.publish(entryId: "hero-home", field: "internalTitle", value: "v2")
            let again = try await withStoreSource(server, store: store) { try await $0.entry(id: "hero-home") }
            #expect(server.entryRequests.count == 2)
            #expect(store.row("hero-home")?.isInvalidated == false && store.row("hero-home")?.revision == revision(again))
        }
    }

    @Test func aCopyWrittenBeforeALocalInvalidationIsNotServedWhileTheStoreCatchesUp() async throws {
        try await withLocalCDAServer { server in
            let store = MemoryEntryStore(clock: ManualClock(), holdInvalidations: true)
            try await withStoreSource(server, store: store) { source in
                _ = try await source.entry(id: "hero-home")
                store.clock.advance(by: .milliseconds(10))
                server.space.publish(entryId: "hero-home", field: "internalTitle", value: "v2")
                try source.invalidate(entryId: "hero-home")          // the store has not marked the row yet
                store.clock.advance(by: .milliseconds(10))
                let again = try await source.entry(id: "hero-home")
                #expect(server.entryRequests.count == 2)
                #expect(again.jsonText.contains("v2"))
                try await store.releaseInvalidation()
            }
        }
    }

    @Test func aRemoteInvalidationDropsTheCacheWithoutCallingTheStore() async throws {
        try await withLocalCDAServer { server in
            let store = MemoryEntryStore(clock: ManualClock())
            try await withStoreSource(server, store: store, cache: ContentfulCachePolicy()) { source in
                _ = try await source.entry(id: "hero-home")
                source.applyRemoteInvalidation(ContentfulInvalidation(spaceId: "other-space", environment: "master", entryId: "hero-home"))
                source.applyRemoteInvalidation(ContentfulInvalidation(spaceId: "local-space", environment: "staging", entryId: nil))
                #expect(source.cachedQueryCount == 1)
                // The other replica invalidated and marked the row; this one drops its copy.
                await store.invalidate(ContentfulInvalidation(spaceId: "local-space", environment: "master", entryId: "hero-home"))
                store.state.withLock { $0.invalidations.removeAll() }
                source.applyRemoteInvalidation(ContentfulInvalidation(spaceId: "local-space", environment: "master", entryId: "hero-home"))
                #expect(source.cachedQueryCount == 0)
                _ = try await source.entry(id: "hero-home")
                await source.waitForPendingStoreWork()
                #expect(server.entryRequests.count == 2)
                #expect(store.state.withLock { $0.invalidations.isEmpty })
            }
        }
    }

    @Test func aRevisionOlderThanOneServedIsNeverTakenFromTheStore() async throws {
        try await withLocalCDAServer { server in
            let store = MemoryEntryStore(clock: ManualClock())
            try await withStoreSource(server, store: store) { source in
                let old = try await source.entry(id: "hero-home")
                let oldRow = try #require(store.row("hero-home"))
                server.space.publish(entryId: "hero-home", field: "internalTitle", value: "v2")
                try source.invalidate(entryId: "hero-home")
                let new = try await source.entry(id: "hero-home")
                #expect(try #require(revision(new)) > #require(revision(old)))
                // The store went back to the old revision (a copy written while this replica's
                // bus was down): after revalidation it is not used, the CDA is asked.
                source.revalidateAll()
                store.clock.advance(by: .milliseconds(10))
                store.force(oldRow)
                let requests = server.entryRequests.count
                let after = try await source.entry(id: "hero-home")
                #expect(revision(after) == revision(new))
                #expect(server.entryRequests.count == requests + 1)
                // Nor as a stale-if-error fallback.
                source.revalidateAll()
                store.force(oldRow)
                try await server.stop()
                let during = try await source.entry(id: "hero-home")   // the revalidated memory copy
                #expect(revision(during) == revision(new))
            }
        }
    }

    @Test func revalidationServesTheCachedCopyOnlyWhenTheFetchFails() async throws {
        try await withLocalCDAServer { server in
            let store = MemoryEntryStore(clock: ManualClock())
            try await withStoreSource(server, store: store) { source in
                let first = try await source.entry(id: "holiday-banner")
                let row = try #require(store.row("holiday-banner"))
                source.revalidateAll()
                store.clock.advance(by: .milliseconds(10))
                // The store's copy was written before: it may have missed the invalidations too,
                // so the CDA is asked.
                #expect(try await source.entry(id: "holiday-banner").jsonText == first.jsonText)
                #expect(server.entryRequests.count == 2)
                // A copy another replica wrote after the revalidation is used: no request.
                source.revalidateAll()
                store.clock.advance(by: .milliseconds(10))
                store.force(row)
                #expect(try await source.entry(id: "holiday-banner").jsonText == first.jsonText)
                #expect(server.entryRequests.count == 2)
                // Without a usable stored copy the CDA is asked; when it fails the copy is served.
                await store.invalidate(ContentfulInvalidation(spaceId: "local-space", environment: "master", entryId: nil))
                source.revalidateAll()
                server.enqueue(.contentfulServerError(503))
                #expect(try await source.entry(id: "holiday-banner").id == "holiday-banner")
                #expect(server.entryRequests.count == 3)
            }
        }
    }

    @Test func oneIdIsFetchedUnderTheStoresClaimAndACopyWrittenMeanwhileIsUsed() async throws {
        try await withLocalCDAServer { server in
            let store = MemoryEntryStore(clock: ManualClock())
            let rowFromAnotherReplica = try await withStoreSource(server, store: store) { source in
                _ = try await source.entry(id: "promo-strip")
                return try #require(store.row("promo-strip"))
            }
            #expect(store.state.withLock { $0.claims.map(\.entryId) } == ["promo-strip"])
            /// A store whose first read misses and whose claim finds the copy just written.
            final class LateStore: ContentfulEntryStore {
                let base: MemoryEntryStore
                let copy: ContentfulStoredEntry
                init(base: MemoryEntryStore, copy: ContentfulStoredEntry) { self.base = base; self.copy = copy }
                func entries(for keys: [ContentfulEntryStoreKey]) async -> [ContentfulEntryStoreKey: ContentfulStoredEntry] { [:] }
                func save(_ entries: [ContentfulStoredEntry]) async { await base.save(entries) }
                func withFetchClaim<Result: Sendable>(
                    for key: ContentfulEntryStoreKey,
                    _ fetch: (ContentfulStoredEntry?) async -> (result: Result, writeBack: ContentfulStoredEntry?)
                ) async -> Result {
                    let (result, writeBack) = await fetch(copy)
                    #expect(writeBack == nil)
                    return result
                }
                func invalidate(_ invalidation: ContentfulInvalidation) async {}
            }
            let late = LateStore(base: store, copy: rowFromAnotherReplica)
            let source = try ContentfulDeliverySource(
                configuration: .init(spaceId: "local-space", accessToken: "local-cda-token", baseURL: server.baseURL),
                clock: store.clock, entryStore: late, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            #expect(try await source.entry(id: "promo-strip").jsonText == rowFromAnotherReplica.jsonText)
            #expect(server.entryRequests.count == 1)
            await source.shutdown()
        }
    }

    @Test func thePreviewAPINeverUsesTheStore() async throws {
        try await withLocalCDAServer { server in
            let store = MemoryEntryStore(clock: ManualClock())
            try await withStoreSource(server, store: store, api: .preview) { source in
                _ = try await source.entry(id: "hero-home")
                try source.invalidate(entryId: "hero-home")
                await source.waitForPendingStoreWork()
            }
            #expect(store.state.withLock { $0.rows.isEmpty && $0.reads == 0 && $0.invalidations.isEmpty })
        }
    }

    @Test func theRevisionSumOfHostileRevisionsStopsAtIntMaxInsteadOfTrapping() {
        func sum(_ fingerprint: String) -> Int {
            ContentfulStoredEntry(
                key: .init(spaceId: "s", environment: "master", locale: "", entryId: "e"), revision: 1,
                fingerprint: fingerprint, referencedIds: [], jsonText: "{}"
            ).revisionSum
        }
        #expect(sum("Entry/a@3,Asset/b@4,missing/c") == 7)
        #expect(sum("Entry/a@\(Int.max),Entry/b@\(Int.max)") == Int.max)
        #expect(sum("Entry/a@\(Int.max),Entry/b@1,Entry/c@-5") == Int.max)
        #expect(sum("Entry/a@-9223372036854775808,Entry/b@2,Entry/c@99999999999999999999,Entry/d@1e3,Entry/e@?") == 2)
        #expect(sum("") == 0)
    }
}
