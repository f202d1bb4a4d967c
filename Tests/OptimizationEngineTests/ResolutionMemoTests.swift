import Foundation
import JavaScriptHost
@_spi(Benchmarking) import Optimization
import OptimizationTestSupport
import OptimizationTesting
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
@testable import OptimizationEngine
import Testing

/// The runtime's memo of resolver answers (``ResolutionMemo``): a warm resolve does not enter
/// JavaScript, yet every resolve still gets its own context id, and the context registry ends up
/// exactly as if each had been registered by the engine at the time it was made.
@Suite("Memoized resolution")
struct ResolutionMemoTests {
    static let hero = "entries/hero-optimized.json"

    /// A client on a manual clock with consent and a profile, so clicks are accepted and published.
    private func makeMemoClient(
        clock: ManualClock = ManualClock(), entryCacheSize: Int = 1000, logLevel: OptimizationLogLevel = .error
    ) throws -> OptimizationClient {
        let client = OptimizationClient(environment: .init(clock: clock, transport: UnconfiguredFetchTransport(), storage: .disabled))
        try client.initialize(config: OptimizationConfig(
            clientId: "memo", logLevel: logLevel, entryCacheSize: entryCacheSize,
            defaults: StorageDefaults(consent: true, profile: ["id": "p-1"])))
        return client
    }

    /// Resolves twice, so the pair is remembered (from an entry's second resolve on); returns the
    /// first result.
    @discardableResult
    private func warm(_ client: OptimizationClient, _ entry: ContentfulEntry, _ selections: SelectedOptimizations?) -> ResolvedOptimizedEntry {
        let first = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
        _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
        return first
    }

    /// Whether two results render the same thing (context ids aside).
    private func sameRendering(_ a: ResolvedOptimizedEntry, _ b: ResolvedOptimizedEntry) -> Bool {
        a.entry == b.entry && a.selectedOptimization == b.selectedOptimization && a.isEmptyVariant == b.isEmptyVariant
    }

    private func heroAndSelections() throws -> (ContentfulEntry, SelectedOptimizations) {
        (try ContentfulEntry(jsonData: fixtureData(Self.hero)),
         try SelectedOptimizations(jsonData: fixtureData("selections/new-visitor.json")))
    }

    /// The `optimization` object the event stream published for a click carrying `contextId`
    /// (nil when the registry did not know the id).
    private func publishedContext(_ client: OptimizationClient, _ contextId: String) async throws -> JSONValue? {
        var probe = EventProbe(client)
        let result = try await client.trackClick(TrackClickPayload(componentId: "hero", optimizationContextId: contextId, variantIndex: 1))
        #expect(result.accepted)
        let events = await probe.newEvents()
        try #require(events.count == 1)
        return events[0]["optimization"]
    }

    @Test func aWarmResolveDoesNotEnterTheEngineAndStillGetsItsOwnContextId() throws {
        let client = try makeMemoClient()
        defer { client.destroy() }
        let (entry, selections) = try heroAndSelections()
        let runtime = try #require(client.currentRuntime)
        let first = warm(client, entry, selections)
        let callsAfterFirst = runtime.transfers.resolveCalls
        #expect(callsAfterFirst >= 1)
        var ids: Set<String> = []
        for _ in 0..<50 {
            let again = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
            #expect(sameRendering(again, first))
            ids.insert(try #require(again.optimizationContextId))
        }
        #expect(runtime.transfers.resolveCalls == callsAfterFirst, "answered from the memo")
        #expect(ids.count == 50 && !ids.contains(first.optimizationContextId ?? ""), "a fresh id per resolve")
        // Nothing selected is its own pair, with no context.
        let none = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: .empty)
        let noneAgain = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: .empty)
        #expect(none == noneAgain && none.optimizationContextId == nil && none.entryId == entry.id)
    }

    @Test func selectionsDecodedAgainWithTheSameContentAreAnsweredFromTheMemo() throws {
        let client = try makeMemoClient()
        defer { client.destroy() }
        let (entry, selections) = try heroAndSelections()
        let runtime = try #require(client.currentRuntime)
        let first = warm(client, entry, selections)
        let calls = runtime.transfers.resolveCalls
        // What a service does per request: decode the visitor's selections into a new object.
        for _ in 0..<3 {
            let decoded = try SelectedOptimizations(jsonData: fixtureData("selections/new-visitor.json"))
            let again = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: decoded)
            #expect(sameRendering(again, first))
            #expect(again.optimizationContextId != nil && again.optimizationContextId != first.optimizationContextId)
        }
        #expect(runtime.transfers.resolveCalls == calls)
        // Different content is a different pair.
        _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: .empty)
        #expect(runtime.transfers.resolveCalls > calls)
    }

    @Test func anEntryResolvedOnceIsNotKeptAliveByTheMemo() throws {
        let client = try makeMemoClient()
        defer { client.destroy() }
        let selections = try SelectedOptimizations(jsonData: fixtureData("selections/new-visitor.json"))
        weak var once: ContentfulEntry?
        weak var twice: ContentfulEntry?
        do {
            let oneOff = try ContentfulEntry(jsonData: fixtureData(Self.hero))
            once = oneOff
            _ = client.resolveOptimizedEntry(baseline: oneOff, selectedOptimizations: selections)
            let reused = try ContentfulEntry(jsonData: fixtureData(Self.hero))
            twice = reused
            warm(client, reused, selections)
        }
        #expect(once == nil, "a document wrapped for one call is not remembered")
        #expect(twice != nil, "a reused entry is remembered (bounded by ResolutionMemo.pairLimit)")
    }

    @Test func aMemoizedContextEnrichesEventsExactlyLikeAnEagerOne() async throws {
        let client = try makeMemoClient()
        defer { client.destroy() }
        let (entry, selections) = try heroAndSelections()
        let eager = try #require(warm(client, entry, selections).optimizationContextId)
        let memoized = try #require(client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).optimizationContextId)
        let fromEngine = try #require(try await publishedContext(client, eager))
        let fromMemo = try #require(try await publishedContext(client, memoized))
        #expect(fromMemo["contextId"]?.stringValue == memoized)
        #expect(fromMemo["baselineEntry"]?["sys"]?["id"]?.stringValue == entry.id)
        guard case .object(var engineMembers) = fromEngine, case .object(var memoMembers) = fromMemo else {
            Issue.record("optimization is not an object")
            return
        }
        engineMembers["contextId"] = nil
        memoMembers["contextId"] = nil
        #expect(engineMembers == memoMembers)
    }

    @Test func theRegistryKeepsTheSameThousandContextsAsEagerRegistration() async throws {
        let client = try makeMemoClient()
        defer { client.destroy() }
        let (entry, selections) = try heroAndSelections()
        // 1,001 registrations, all but the first deferred: the registry holds 1,000.
        let ids = (0...ResolutionMemo.registrationLimit).map { _ in
            client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).optimizationContextId ?? ""
        }
        #expect(try await publishedContext(client, ids[0]) == nil, "evicted, as the 1,001st registration evicts it")
        #expect(try await publishedContext(client, ids[1]) != nil, "kept")
        #expect(try await publishedContext(client, ids[ids.count - 1]) != nil, "kept")
    }

    @Test func idleTimeCountsFromTheResolveNotFromTheReplay() async throws {
        let clock = ManualClock()
        let client = try makeMemoClient(clock: clock)
        defer { client.destroy() }
        let (entry, selections) = try heroAndSelections()
        warm(client, entry, selections)
        let kept = try #require(client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).optimizationContextId)
        let expired = try #require(client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).optimizationContextId)
        // Both registrations are still deferred: nothing entered the engine since.
        clock.advance(by: .milliseconds(1_800_000))
        #expect(try await publishedContext(client, kept) != nil, "exactly 30 minutes idle is kept")
        clock.advance(by: .milliseconds(1))
        #expect(try await publishedContext(client, expired) == nil, "30:00.001 after its resolve it is gone")
    }

    @Test func aDocumentTheEngineDroppedIsHandedOverAgainForTheReplay() async throws {
        let client = try makeMemoClient(entryCacheSize: 1)
        defer { client.destroy() }
        let (entry, selections) = try heroAndSelections()
        let runtime = try #require(client.currentRuntime)
        warm(client, entry, selections)
        // Another entry takes the engine's only cache slot.
        _ = client.resolveOptimizedEntry(baseline: try ContentfulEntry(jsonData: fixtureData("entries/roundtrip-exact.json")), selectedOptimizations: selections)
        let transfersBefore = runtime.transfers.entries
        let memoized = try #require(client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).optimizationContextId)
        #expect(runtime.transfers.entries == transfersBefore, "the resolve itself did not need the engine")
        let context = try await publishedContext(client, memoized)
        #expect(context?["baselineEntry"]?["sys"]?["id"]?.stringValue == entry.id)
        #expect(runtime.transfers.entries == transfersBefore + 1, "the replay handed the entry over again")
    }

    @Test func resetForgetsContextsThatWereStillDeferred() async throws {
        let client = try makeMemoClient()
        defer { client.destroy() }
        let (entry, selections) = try heroAndSelections()
        warm(client, entry, selections)
        let memoized = try #require(client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).optimizationContextId)
        client.reset()
        client.consent(true)
        #expect(try await publishedContext(client, memoized) == nil)
    }

    @Test func atDebugLevelEveryResolveGoesToTheEngine() throws {
        let client = try makeMemoClient(logLevel: .debug)
        defer { client.destroy() }
        let (entry, selections) = try heroAndSelections()
        let runtime = try #require(client.currentRuntime)
        _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
        let before = runtime.transfers.resolveCalls
        for _ in 0..<3 { _ = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections) }
        #expect(runtime.transfers.resolveCalls == before + 3)
    }

    @Test func aServiceAnswersWarmResolvesFromEachEnginesMemoUntilShutdown() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, engines: 2) { service in
                let (entry, selections) = try heroAndSelections()
                let first = service.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
                let calls = service.poolRuntimes.map(\.transfers.resolveCalls).reduce(0, +)
                for _ in 0..<20 {
                    let again = service.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
                    #expect(sameRendering(again, first))
                }
                // Each engine enters JavaScript at most twice more (its first two resolves of the
                // entry; the second one remembers the pair).
                #expect(service.poolRuntimes.map(\.transfers.resolveCalls).reduce(0, +) <= calls + 2 * service.poolRuntimes.count)
                #expect(first.entryId != entry.id, "the hero renders a variant for these selections")
                // After shutdown the memo no longer answers: the baseline, as documented.
                await service.shutdown()
                #expect(service.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).entryId == entry.id)
            }
        }
    }

    /// Every fixture entry for every fixture selection set: what the memo serves equals what the
    /// resolver in the engine answers (a guard for the memo's assumption that resolution depends
    /// on the two documents only).
    @Test func theMemoServesWhatTheEngineAnswersForEveryFixturePair() throws {
        let client = try makeMemoClient()
        defer { client.destroy() }
        let manager = FileManager.default
        let entries = try manager.contentsOfDirectory(atPath: fixturesDirectory.appendingPathComponent("entries").path).sorted()
        let selectionFiles = try manager.contentsOfDirectory(atPath: fixturesDirectory.appendingPathComponent("selections").path).sorted()
        let selectionSets = selectionFiles.compactMap { try? SelectedOptimizations(jsonData: fixtureData("selections/" + $0)) } + [.empty]
        #expect(entries.count >= 20 && selectionSets.count >= 10)
        var compared = 0
        for name in entries {
            guard let entry = try? ContentfulEntry(jsonData: fixtureData("entries/" + name)) else { continue }
            for selections in selectionSets {
                let first = warm(client, entry, selections)
                let memoized = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
                let engine = client.resolveOptimizedEntryInEngine(baseline: entry, selectedOptimizations: selections)
                for other in [memoized, engine] {
                    #expect(sameRendering(other, first), "\(name)")
                    #expect((other.optimizationContextId == nil) == (first.optimizationContextId == nil), "\(name)")
                }
                compared += 1
            }
        }
        #expect(compared >= 200)
    }
}
