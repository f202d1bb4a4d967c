import Foundation
import Synchronization
import JavaScriptHost
@testable import OptimizationContent
import OptimizationTestSupport
import Testing

@Suite("Invalidations are bounded and touch only the entries they name")
struct ContentfulInvalidationBoundTests {
    private static func id(_ index: Int) -> String {
        let digits = String(index)
        return String(repeating: "i", count: ContentfulEntryId.maximumLength - digits.count) + digits
    }

    @Test func aHundredThousandDistinctIdsKeepTheLogAtItsBound() async throws {
        let transport = CannedCDATransport()
        let source = try makeCannedSource(transport)
        let kept = try await source.entry(id: "kept-entry")
        for index in 0..<100_000 {
            try source.invalidate(entryId: Self.id(index))
        }
        #expect(source.cache.rememberedInvalidationCount <= ContentfulEntryCache.rememberedInvalidations)
        #expect(ContentfulEntryCache.rememberedInvalidations == 10_000)
        // The entry no invalidation named is still served from the cache.
        #expect(try await source.entry(id: "kept-entry") === kept)
        #expect(transport.requestCount == 1)
        await source.shutdown()
    }

    @Test func forgottenInvalidationsCountAsAtLeastAsLateAsTheyWere() {
        var log = ContentfulInvalidationLog(capacity: 4)
        for (sequence, id) in ["a", "b", "c", "d", "e"].enumerated() {
            log.record(id, at: .init(sequence: sequence + 1, time: Double(sequence + 1) * 10))
        }
        #expect(log.count <= 4)
        for (sequence, id) in ["a", "b", "c", "d", "e"].enumerated() {
            let mark = log.lastMark(of: id)
            #expect(mark.sequence >= sequence + 1 && mark.time >= Double(sequence + 1) * 10, "\(id)")
        }
        // Still remembered exactly: the recent ones.
        #expect(log.lastMark(of: "e") == .init(sequence: 5, time: 50))
        #expect(log.lastMark(of: "never-invalidated").sequence < 5)
        // Repeating one id takes one slot.
        var repeated = ContentfulInvalidationLog(capacity: 4)
        for sequence in 1...1000 { repeated.record("hot", at: .init(sequence: sequence, time: Double(sequence))) }
        #expect(repeated.count == 1 && repeated.lastMark(of: "hot").sequence == 1000 && repeated.floor == .never)
    }

    @Test func invalidationsOfOtherEntriesDuringAFetchDoNotKeepItOutOfTheCache() async throws {
        let transport = CannedCDATransport()
        let source = try makeCannedSource(transport)
        // A steady stream of invalidations of another entry arrives while each fetch is in flight.
        transport.onRequest.withLock { $0 = { _ in for _ in 0..<50 { try? source.invalidate(entryId: "hot-entry") } } }
        let first = try await source.entry(id: "calm-entry")
        let batch = try await source.entries(ids: ["calm-a", "calm-b"])
        #expect(transport.requestCount == 2)
        #expect(try await source.entry(id: "calm-entry") === first)
        #expect(try await source.entries(ids: ["calm-a", "calm-b"]).entries.map(ObjectIdentifier.init) == batch.entries.map(ObjectIdentifier.init))
        #expect(transport.requestCount == 2)
        await source.shutdown()
    }

    @Test func anInvalidationOfTheFetchedEntryDuringItsFetchStillKeepsItOut() async throws {
        let transport = CannedCDATransport()
        let source = try makeCannedSource(transport)
        transport.onRequest.withLock { $0 = { ids in for id in ids { try? source.invalidate(entryId: id) } } }
        _ = try await source.entry(id: "changing-entry")
        transport.onRequest.withLock { $0 = nil }
        _ = try await source.entry(id: "changing-entry")
        #expect(transport.requestCount == 2)
        await source.shutdown()
    }

    @Test func invalidationsOfOtherEntriesDuringAFetchDoNotKeepItOutOfTheEntryStore() async throws {
        let transport = CannedCDATransport()
        let store = MemoryEntryStore(clock: ManualClock())
        let source = try makeCannedSource(transport, clock: store.clock, entryStore: store)
        transport.onRequest.withLock { $0 = { _ in try? source.invalidate(entryId: "hot-entry") } }
        _ = try await source.entry(id: "calm-entry")             // one id: written back under the claim
        _ = try await source.entries(ids: ["calm-a", "calm-b"])  // several: saved after the fetch
        await source.waitForPendingStoreWork()
        #expect(store.row("calm-entry") != nil && store.row("calm-a") != nil && store.row("calm-b") != nil)
        // And an answer whose own entry was invalidated meanwhile is not written back.
        transport.onRequest.withLock { $0 = { ids in for id in ids { try? source.invalidate(entryId: id) } } }
        _ = try await source.entry(id: "changing-entry")
        _ = try await source.entries(ids: ["changing-a", "changing-b"])
        await source.waitForPendingStoreWork()
        #expect(store.row("changing-entry") == nil && store.row("changing-a") == nil && store.row("changing-b") == nil)
        await source.shutdown()
    }
}

/// An entry store whose `invalidate` waits until the test opens it, and tells when the first call
/// arrived; records every invalidation.
private final class GatedStore: ContentfulEntryStore {
    private struct State {
        var open = false
        var waiting: [CheckedContinuation<Void, Never>] = []
        var received: [ContentfulInvalidation] = []
    }
    private let state = Mutex(State())
    let firstCall: AsyncStream<Void>
    private let firstCallContinuation: AsyncStream<Void>.Continuation

    init() {
        (firstCall, firstCallContinuation) = AsyncStream.makeStream()
    }

    var received: [ContentfulInvalidation] { state.withLock { $0.received } }

    func open() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        waiting.forEach { $0.resume() }
    }

    func entries(for keys: [ContentfulEntryStoreKey]) async -> [ContentfulEntryStoreKey: ContentfulStoredEntry] { [:] }
    func save(_ entries: [ContentfulStoredEntry]) async {}
    func withFetchClaim<Result: Sendable>(
        for key: ContentfulEntryStoreKey,
        _ fetch: (ContentfulStoredEntry?) async -> (result: Result, writeBack: ContentfulStoredEntry?)
    ) async -> Result {
        await fetch(nil).result
    }

    func invalidate(_ invalidation: ContentfulInvalidation) async {
        firstCallContinuation.yield()
        await withCheckedContinuation { continuation in
            let proceed = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiting.append(continuation)
                return false
            }
            if proceed { continuation.resume() }
        }
        state.withLock { $0.received.append(invalidation) }
    }
}

@Suite("Invalidations waiting for a slow entry store are bounded")
struct ContentfulStoreInvalidationQueueTests {
    private static func invalidation(_ id: String?) -> ContentfulInvalidation {
        ContentfulInvalidation(spaceId: "canned-space", environment: "master", entryId: id)
    }

    @Test func aStuckStoreHoldsAtMostTheBoundAndThenGetsEverythingInvalidated() async throws {
        let store = GatedStore()
        let source = try makeCannedSource(CannedCDATransport(), entryStore: store)
        try source.invalidate(entryId: "first")
        var arrivals = store.firstCall.makeAsyncIterator()
        await arrivals.next()                                   // the store is now stuck on "first"
        for index in 0..<100_000 { try source.invalidate(entryId: "id-\(index)") }
        store.open()
        await source.waitForPendingStoreWork()
        let received = store.received
        #expect(received.count <= ContentfulStoreInvalidationQueue.maximumPending + 1)
        #expect(received.first == Self.invalidation("first"))
        #expect(received.contains(Self.invalidation(nil)))      // what was dropped is covered
        #expect(received.last == Self.invalidation("id-99999"))
        await source.shutdown()
    }

    @Test func aStreamOfOneIdWhileTheStoreIsBusyReachesItOnceMore() async throws {
        let store = GatedStore()
        let source = try makeCannedSource(CannedCDATransport(), entryStore: store)
        try source.invalidate(entryId: "hot-entry")
        var arrivals = store.firstCall.makeAsyncIterator()
        await arrivals.next()
        for _ in 0..<10_000 { try source.invalidate(entryId: "hot-entry") }
        store.open()
        await source.waitForPendingStoreWork()
        #expect(store.received == [Self.invalidation("hot-entry"), Self.invalidation("hot-entry")])
        await source.shutdown()
    }
}
