import Foundation
import JavaScriptHost
@testable import OptimizationContent
import OptimizationTestSupport
import Testing

@Suite("Entry ids are checked where they enter the Content Delivery API client")
struct ContentfulEntryIdTests {
    static let invalidIds = [
        "", String(repeating: "a", count: 65), "a b", "a/b", "a?b", "a,b", "a@b", "é", "a\u{0}b",
        String(decoding: [0xFF, 0x61], as: UTF8.self), String(repeating: "x", count: 1 << 20),
    ]

    @Test func contentfulsAlphabetUpToSixtyFourCharacters() {
        for valid in ["5KsDBWseXY6QegucYAoacS", "a", String(repeating: "Z", count: 64), "hero-home.v2_EU", "0"] {
            #expect(ContentfulEntryId.isValid(valid), "\(valid)")
        }
        for invalid in Self.invalidIds {
            #expect(!ContentfulEntryId.isValid(invalid), "\(invalid.prefix(20))")
        }
    }

    @Test func fetchesRejectAnInvalidIdWithoutAskingTheCDA() async throws {
        let transport = CannedCDATransport()
        let source = try makeCannedSource(transport)
        for invalid in Self.invalidIds {
            await #expect(throws: ContentfulDeliveryError.invalidEntryId) { try await source.entry(id: invalid) }
            await #expect(throws: ContentfulDeliveryError.invalidEntryId) { try await source.entries(ids: ["hero-home", invalid]) }
        }
        #expect(transport.requestCount == 0 && source.cachedQueryCount == 0)
        #expect(try await source.entry(id: "hero-home").id == "hero-home")
        await source.shutdown()
    }

    @Test func anInvalidIdIsNeitherRememberedNorSentToTheEntryStore() async throws {
        let transport = CannedCDATransport()
        let store = MemoryEntryStore(clock: ManualClock())
        let source = try makeCannedSource(transport, clock: store.clock, entryStore: store)
        _ = try await source.entry(id: "hero-home")
        for invalid in Self.invalidIds {
            #expect(throws: ContentfulDeliveryError.invalidEntryId) { try source.invalidate(entryId: invalid) }
            source.applyRemoteInvalidation(ContentfulInvalidation(spaceId: "canned-space", environment: "master", entryId: invalid))
        }
        await source.waitForPendingStoreWork()
        #expect(store.state.withLock { $0.invalidations.isEmpty })
        #expect(source.cache.rememberedInvalidationCount == 0)
        // Nothing was invalidated: the cached entry is still served without a request.
        #expect(source.cachedQueryCount == 1)
        _ = try await source.entry(id: "hero-home")
        #expect(transport.requestCount == 1)
        await source.shutdown()
    }
}
