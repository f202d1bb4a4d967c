import Foundation
import JavaScriptHost
import Logging
@testable import Optimization
@testable import OptimizationContent
import OptimizationTesting
import OptimizationTestSupport
@testable import OptimizationClientFace
import Testing

/// A source pointed at `server`, on `clock`, shut down after `body`.
func withCDASource<T>(
    _ server: LocalContentfulDeliveryServer, clock: any HostClock = ManualClock(),
    cache: ContentfulCachePolicy = ContentfulCachePolicy(), token: String = "local-cda-token",
    configure: (inout ContentfulDeliveryConfiguration) -> Void = { _ in },
    _ body: (ContentfulDeliverySource) async throws -> T
) async throws -> T {
    var configuration = ContentfulDeliveryConfiguration(
        spaceId: server.space.spaceId, accessToken: token, baseURL: server.baseURL, requestTimeout: .milliseconds(3000))
    configure(&configuration)
    let source = try ContentfulDeliverySource(
        configuration: configuration, cachePolicy: cache, clock: clock, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    do {
        let result = try await body(source)
        await source.shutdown()
        return result
    } catch {
        await source.shutdown()
        throw error
    }
}

/// A ``ManualClock`` that tells waiting tests when a timer is scheduled (no polling, no sleeps).
final class SignallingClock: HostClock, @unchecked Sendable {
    let manual = ManualClock()
    private let lock = NSLock()
    private var scheduledCount = 0
    private var waiters: [(Int, CheckedContinuation<Void, Never>)] = []

    func now() -> Double { manual.now() }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any HostTimer {
        let timer = manual.schedule(after: delay, action)
        let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            scheduledCount += 1
            let ready = waiters.filter { $0.0 <= scheduledCount }.map(\.1)
            waiters.removeAll { $0.0 <= scheduledCount }
            return ready
        }
        ready.forEach { $0.resume() }
        return timer
    }

    /// Returns once `count` timers were scheduled in all. Fails after 60 s (a failure bound).
    func waitForScheduledTimers(_ count: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let done = self.lock.withLock { () -> Bool in
                        if self.scheduledCount >= count { return true }
                        self.waiters.append((count, continuation))
                        return false
                    }
                    if done { continuation.resume() }
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                throw CancellationError()
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }
}

private let newVisitor: SelectedOptimizations? = {
    guard let data = try? Data(contentsOf: spaceFixturesDirectory.appendingPathComponent("experience/new-visitor.json")) else { return nil }
    return try? SelectedOptimizations(jsonData: data)
}()

/// Resolution of `entry` for the test space's new visitor.
private func resolvedId(_ client: OptimizationClient, _ entry: ContentfulEntry) -> String? {
    client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: newVisitor).entry["sys"]?["id"]?.stringValue
}

private func fileEntry(_ id: String) throws -> ContentfulEntry {
    try ContentfulEntry(jsonData: Data(contentsOf: spaceEntriesDirectory.appendingPathComponent("\(id).json")))
}

@Suite("ContentfulDeliverySource")
struct ContentfulDeliverySourceTests {
    static let expected = [
        "hero-home": "hero-home-europe", "promo-strip": "promo-strip-b",
        "holiday-banner": "holiday-banner-c", "shipping-note": "shipping-note-eu",
        "gear-grid": "gear-grid",
    ]

    // MARK: Query forms, compared with the files

    @Test func oneByIdResolvesLikeTheFile() async throws {
        let client = try makeClient()
        try await withLocalCDAServer { server in
            try await withCDASource(server) { source in
                for (id, rendered) in Self.expected {
                    let fetched = try await source.entry(id: id)
                    #expect(fetched.isCollection && fetched.id == id)
                    let fromFile = try fileEntry(id)
                    #expect(resolvedId(client, fetched) == rendered)
                    #expect(client.resolveOptimizedEntry(baseline: fetched, selectedOptimizations: newVisitor).entry
                        == client.resolveOptimizedEntry(baseline: fromFile, selectedOptimizations: newVisitor).entry)
                }
                let request = try #require(server.entryRequests.first)
                #expect(request.path == "/spaces/local-space/environments/master/entries")
                #expect(request.queryValue("include") == "10" && request.queryValue("sys.id") != nil)
                #expect(request.header("authorization") == "Bearer local-cda-token")
            }
        }
    }

    @Test func manyByIdKeepTheAskedOrderAndReportMissingIds() async throws {
        let client = try makeClient()
        try await withLocalCDAServer { server in
            try await withCDASource(server) { source in
                let asked = ["holiday-banner", "missing-1", "hero-home", "gear-grid", "promo-strip"]
                let batch = try await source.entries(ids: asked)
                #expect(batch.entries.map(\.id) == asked.filter { $0 != "missing-1" })
                #expect(batch.missingIds == ["missing-1"])
                for entry in batch.entries {
                    #expect(resolvedId(client, entry) == Self.expected[entry.id])
                    #expect(client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: newVisitor).entry
                        == client.resolveOptimizedEntry(baseline: try fileEntry(entry.id), selectedOptimizations: newVisitor).entry)
                }
                #expect(server.entryRequests.count == 1)
                #expect(server.entryRequests.first?.queryValue("sys.id[in]")?.split(separator: ",").count == 5)
            }
        }
    }

    @Test func manyByIdChunksAtOneHundred() async throws {
        try await withLocalCDAServer { server in
            for index in 0..<230 {
                server.space.put(["sys": ["type": "Entry", "id": .string("gen-\(index)"), "revision": 1,
                                          "contentType": ["sys": ["type": "Link", "linkType": "ContentType", "id": "content"]]],
                                  "fields": ["internalTitle": .string("generated \(index)")]])
            }
            try await withCDASource(server) { source in
                let asked = (0..<230).reversed().map { "gen-\($0)" }
                let batch = try await source.entries(ids: asked)
                #expect(batch.entries.map(\.id) == asked && batch.missingIds.isEmpty)
                let sizes = server.entryRequests.map { $0.queryValue("sys.id[in]")?.split(separator: ",").count ?? 0 }.sorted()
                #expect(sizes == [30, 100, 100])
                // Now cached: no request at all.
                _ = try await source.entries(ids: asked)
                #expect(server.entryRequests.count == 3)
            }
        }
    }

    @Test func bySlugNeedsExactlyOneMatch() async throws {
        try await withLocalCDAServer { server in
            try await withCDASource(server) { source in
                let one = try await source.entry(contentType: "nt_experience", field: "nt_experience_id", value: "exp-promo-ab")
                #expect(one.id == "exp-promo-ab")
                await #expect(throws: ContentfulDeliveryError.noMatch(contentType: "content", field: "internalTitle", value: "nope")) {
                    try await source.entry(contentType: "content", field: "internalTitle", value: "nope")
                }
                server.space.put(["sys": ["type": "Entry", "id": "dup-a", "revision": 1,
                                          "contentType": ["sys": ["type": "Link", "linkType": "ContentType", "id": "page"]]],
                                  "fields": ["slug": "home"]])
                server.space.put(["sys": ["type": "Entry", "id": "dup-b", "revision": 1,
                                          "contentType": ["sys": ["type": "Link", "linkType": "ContentType", "id": "page"]]],
                                  "fields": ["slug": "home"]])
                await #expect(throws: ContentfulDeliveryError.ambiguousMatch(contentType: "page", field: "slug", value: "home", ids: ["dup-a", "dup-b"])) {
                    try await source.entry(contentType: "page", field: "slug", value: "home")
                }
                let request = try #require(server.entryRequests.last)
                #expect(request.queryValue("content_type") == "page" && request.queryValue("fields.slug") == "home")
            }
        }
    }

    @Test func unknownEntryAndUnresolvableLinks() async throws {
        let client = try makeClient()
        try await withLocalCDAServer { server in
            server.space.removeEntry(id: "hero-home-europe")
            try await withCDASource(server) { source in
                await #expect(throws: ContentfulDeliveryError.entryNotFound(id: "no-such-entry")) {
                    try await source.entry(id: "no-such-entry")
                }
                // The variant is gone: its link stays a link; resolution still works (the baseline).
                let hero = try await source.entry(id: "hero-home")
                #expect(hero.document["errors"]?[0]?["details"]?["id"] == "hero-home-europe")
                #expect(resolvedId(client, hero) == "hero-home")
            }
        }
    }

    // MARK: Errors

    @Test func unauthorizedIsATypedErrorWithTheCDAMessageAndIsNotRetried() async throws {
        try await withLocalCDAServer { server in
            try await withCDASource(server, token: "wrong") { source in
                do {
                    _ = try await source.entry(id: "hero-home")
                    Issue.record("expected a 401")
                } catch let error as ContentfulDeliveryError {
                    guard case .unauthorized(let message) = error else { Issue.record("\(error)"); return }
                    #expect(message.contains("access token"))
                    #expect(!error.description.contains("wrong"))
                }
                #expect(server.entryRequests.count == 1)
            }
            _ = try await withCDASource(server, configure: { $0.spaceId = "other" }) { source in
                await #expect(throws: ContentfulDeliveryError.notFound("The resource could not be found.")) {
                    try await source.entry(id: "hero-home")
                }
            }
            _ = try await withCDASource(server, configure: { $0.locale = "xx-XX" }) { source in
                await #expect(throws: ContentfulDeliveryError.badRequest("Unknown locale: xx-XX")) {
                    try await source.entry(id: "hero-home")
                }
            }
        }
    }

    @Test func rateLimitWaitsForTheResetHeaderOnTheInjectedClock() async throws {
        let signalling = SignallingClock()
        let clock = signalling.manual
        try await withLocalCDAServer { server in
            server.enqueue(.contentfulRateLimit(resetSeconds: 2))
            try await withCDASource(server, clock: signalling) { source in
                let start = clock.now()
                let fetch = Task { try await source.entry(id: "hero-home") }
                try await signalling.waitForScheduledTimers(1)
                #expect(clock.nextDueTime == start + 2000)
                #expect(server.entryRequests.count == 1)
                clock.advance(by: .milliseconds(1999))
                #expect(clock.pendingTimerCount == 1)
                clock.advance(by: .milliseconds(1))
                let entry = try await fetch.value
                #expect(entry.id == "hero-home")
                #expect(server.entryRequests.count == 2)
            }
        }
    }

    @Test func serverErrorsRetryWithCappedBackoffThenFailWithoutAStorm() async throws {
        let signalling = SignallingClock()
        let clock = signalling.manual
        try await withLocalCDAServer { server in
            server.enqueue(.contentfulServerError(503), .dropConnection, .contentfulServerError(500), .contentfulServerError(502))
            try await withCDASource(server, clock: signalling, configure: { $0.maximumAttempts = 3 }) { source in
                let fetch = Task { () -> Result<ContentfulEntry, ContentfulDeliveryError> in
                    do throws(ContentfulDeliveryError) {
                        return .success(try await source.entry(id: "hero-home"))
                    } catch {
                        return .failure(error)
                    }
                }
                var delays: [Double] = []
                for attempt in 1...2 {
                    try await signalling.waitForScheduledTimers(attempt)
                    let due = try #require(clock.nextDueTime) - clock.now()
                    delays.append(due)
                    clock.advance(by: .milliseconds(due))
                }
                let result = await fetch.value
                guard case .failure(.serverError(let status, _)) = result else { Issue.record("\(result)"); return }
                #expect(status == 500)
                #expect(server.entryRequests.count == 3)
                #expect(delays[0] >= 100 && delays[0] <= 200 && delays[1] >= 200 && delays[1] <= 400, "\(delays)")
            }
            // The 4th scripted answer is still there: nobody asked again.
            #expect(server.pendingScriptedResponseCount == 1)
        }
    }

    @Test func theDeadlineBoundsRetriesAndRateLimitWaits() async throws {
        let clock = ManualClock()
        try await withLocalCDAServer { server in
            server.enqueue(.contentfulRateLimit(resetSeconds: 60))
            try await withCDASource(server, clock: clock, configure: { $0.fetchDeadline = .seconds(10) }) { source in
                do {
                    _ = try await source.entry(id: "hero-home")
                    Issue.record("expected the deadline")
                } catch let error as ContentfulDeliveryError {
                    guard case .deadlineExceeded(let deadline, let last) = error else { Issue.record("\(error)"); return }
                    #expect(deadline == .seconds(10) && last.contains("rate limit"))
                }
                #expect(clock.pendingTimerCount == 0 && server.entryRequests.count == 1)
            }
        }
    }

    // MARK: Cache

    @Test func ttlExpiryRefetches() async throws {
        let clock = ManualClock()
        try await withLocalCDAServer { server in
            try await withCDASource(server, clock: clock, cache: .init(timeToLive: .milliseconds(1000), staleWhileRevalidate: .milliseconds(0), staleIfError: .milliseconds(0))) { source in
                let first = try await source.entry(id: "holiday-banner")
                clock.advance(by: .milliseconds(999))
                #expect(try await source.entry(id: "holiday-banner") === first)
                #expect(server.entryRequests.count == 1)
                clock.advance(by: .milliseconds(1))
                #expect(try await source.entry(id: "holiday-banner") === first)   // same revision: same instance
                #expect(server.entryRequests.count == 2)
            }
        }
    }

    @Test func staleWhileRevalidateServesAtOnceAndRefreshesOnce() async throws {
        let clock = ManualClock()
        try await withLocalCDAServer { server in
            try await withCDASource(server, clock: clock, cache: .init(timeToLive: .milliseconds(1000), staleWhileRevalidate: .milliseconds(5000))) { source in
                let first = try await source.entry(id: "hero-home")
                server.space.publish(entryId: "hero-home", field: "internalTitle", value: "new title")
                clock.advance(by: .milliseconds(1500))
                server.enqueue(.delay(.milliseconds(200)))
                let stale1 = try await source.entry(id: "hero-home")
                let stale2 = try await source.entry(id: "hero-home")
                #expect(stale1 === first && stale2 === first)
                await source.waitForPendingRefreshes()
                #expect(server.entryRequests.count == 2)
                let fresh = try await source.entry(id: "hero-home")
                #expect(fresh !== first && fresh.baseline["fields"]?["internalTitle"] == "new title")
                #expect(server.entryRequests.count == 2)
            }
        }
    }

    @Test func staleIfErrorServesTheLastGoodCopyButNotFor404s() async throws {
        let clock = ManualClock()
        try await withLocalCDAServer { server in
            try await withCDASource(server, clock: clock, cache: .init(timeToLive: .milliseconds(1000), staleWhileRevalidate: .milliseconds(0), staleIfError: .milliseconds(60_000)),
                                    configure: { $0.maximumAttempts = 1 }) { source in
                let first = try await source.entry(id: "hero-home")
                let batchFirst = try await source.entries(ids: ["holiday-banner"])
                clock.advance(by: .milliseconds(2000))
                server.enqueue(.contentfulServerError(500), .contentfulServerError(503))
                #expect(try await source.entry(id: "hero-home") === first)
                #expect(try await source.entries(ids: ["holiday-banner"]).entries.first === batchFirst.entries.first)
                #expect(server.entryRequests.count == 4)
                // Beyond the stale-if-error window the failure surfaces.
                clock.advance(by: .milliseconds(60_000))
                server.enqueue(.contentfulServerError(500))
                await #expect(throws: ContentfulDeliveryError.self) { try await source.entry(id: "hero-home") }
            }
            // A 401 is never masked by a cached copy.
            try await withCDASource(server, clock: clock, cache: .init(timeToLive: .milliseconds(1000), staleWhileRevalidate: .milliseconds(0), staleIfError: .milliseconds(60_000))) { source in
                _ = try await source.entry(id: "hero-home")
                clock.advance(by: .milliseconds(2000))
                server.enqueue(.status(401, body: #"{"message":"revoked"}"#))
                await #expect(throws: ContentfulDeliveryError.unauthorized("revoked")) { try await source.entry(id: "hero-home") }
            }
        }
    }

    @Test func concurrentMissesMakeOneRequest() async throws {
        try await withLocalCDAServer { server in
            server.enqueue(.delay(.milliseconds(300)))
            try await withCDASource(server) { source in
                let entries = try await withThrowingTaskGroup(of: ContentfulEntry.self) { group in
                    for _ in 0..<20 { group.addTask { try await source.entry(id: "promo-strip") } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(entries.count == 20 && entries.allSatisfy { $0 === entries[0] })
                #expect(server.entryRequests.count == 1)
            }
        }
    }

    @Test func invalidationDropsEveryDocumentContainingTheEntry() async throws {
        try await withLocalCDAServer { server in
            try await withCDASource(server) { source in
                let hero = try await source.entry(id: "hero-home")
                let other = try await source.entry(id: "holiday-banner")
                // A webhook for the hero's variant: the hero is dropped, the other entry is kept.
                server.space.publish(entryId: "hero-home-europe", field: "internalTitle", value: "variant v2")
                try source.invalidate(entryId: "hero-home-europe")
                let heroAgain = try await source.entry(id: "hero-home")
                #expect(heroAgain !== hero)
                #expect(try await source.entry(id: "holiday-banner") === other)
                #expect(server.entryRequests.count == 3)
                source.invalidateAll()
                #expect(source.cachedQueryCount == 0 && source.cachedBytes == 0)
                #expect(try await source.entry(id: "holiday-banner") === other)   // refetched; same revisions
                #expect(server.entryRequests.count == 4)
            }
        }
    }

    @Test func theByteBoundEvictsLeastRecentlyUsedEntries() async throws {
        try await withLocalCDAServer { server in
            let sizes = try await withCDASource(server, cache: .disabled) { source in
                var sizes: [Int] = []
                for id in ["hero-home", "holiday-banner", "promo-strip"] {
                    sizes.append(try await source.entry(id: id).jsonText.utf8.count)
                }
                return sizes
            }
            // Room for the two largest but not all three.
            let bound = sizes.sorted().suffix(2).reduce(0, +)
            server.clearRecordedRequests()
            try await withCDASource(server, cache: .init(maximumBytes: bound)) { source in
                for id in ["hero-home", "holiday-banner", "promo-strip"] {
                    _ = try await source.entry(id: id)
                }
                #expect(source.cachedBytes <= bound && source.cachedQueryCount == 2)
                _ = try await source.entry(id: "hero-home")   // the oldest was evicted
                #expect(server.entryRequests.count == 4)
            }
            try await withCDASource(server, cache: .init(maximumEntries: 1)) { source in
                _ = try await source.entry(id: "hero-home")
                _ = try await source.entry(id: "holiday-banner")
                #expect(source.cachedQueryCount == 1)
            }
        }
    }

    @Test func aSameRevisionRefetchTransfersNothingNewToTheEngine() async throws {
        let client = try makeClient()
        let runtime = try #require(client.currentRuntime)
        let clock = ManualClock()
        try await withLocalCDAServer { server in
            try await withCDASource(server, clock: clock, cache: .init(timeToLive: .milliseconds(1000), staleWhileRevalidate: .milliseconds(0))) { source in
                let first = try await source.entry(id: "hero-home")
                _ = resolvedId(client, first)
                let before = runtime.transfers.entries
                source.invalidateAll()
                clock.advance(by: .milliseconds(5000))
                let again = try await source.entry(id: "hero-home")
                #expect(again === first)
                #expect(resolvedId(client, again) == "hero-home-europe")
                #expect(runtime.transfers.entries == before)
                #expect(server.entryRequests.count == 2)
                // A new revision is a new prepared entry, transferred once.
                server.space.publish(entryId: "hero-home", field: "internalTitle", value: "v2")
                try source.invalidate(entryId: "hero-home")
                let changed = try await source.entry(id: "hero-home")
                #expect(changed !== first)
                _ = resolvedId(client, changed)
                #expect(runtime.transfers.entries == before + 1)
            }
        }
    }
}

@Suite("ContentfulDeliverySource: batches and the client convenience")
struct ContentfulDeliveryIntegrationTests {
    @Test func staleIdsOfABatchAreRefreshedInOneChunkedRequest() async throws {
        let clock = ManualClock()
        try await withLocalCDAServer { server in
            try await withCDASource(server, clock: clock, cache: .init(timeToLive: .milliseconds(1000), staleWhileRevalidate: .milliseconds(5000))) { source in
                let ids = ["hero-home", "holiday-banner", "promo-strip"]
                let first = try await source.entries(ids: ids)
                clock.advance(by: .milliseconds(2000))
                let stale = try await source.entries(ids: ids + ["shipping-note"])
                #expect(zip(first.entries, stale.entries).allSatisfy { $0 === $1 })
                await source.waitForPendingRefreshes()
                // First batch, the missing id, then ONE refresh for the three stale ids.
                #expect(server.entryRequests.count == 3)
                let sizes = server.entryRequests.map { $0.queryValue("sys.id[in]")?.split(separator: ",").count ?? 0 }
                #expect(sizes.sorted() == [1, 3, 3], "\(sizes)")
            }
        }
    }

    @Test func fetchOptimizedEntryUsesTheClientsSelectionsAndLocale() async throws {
        let client = try makeClient(OptimizationConfig(clientId: "c", locale: "en-US"))
        let data = try Data(contentsOf: spaceFixturesDirectory.appendingPathComponent("experience/new-visitor.json"))
        let selections = try SelectedOptimizations(jsonData: data)
        try await withLocalCDAServer { server in
            try await withCDASource(server) { source in
                let explicit = try await client.fetchOptimizedEntry(id: "hero-home", from: source, selectedOptimizations: selections)
                #expect(explicit.entry["sys"]?["id"] == "hero-home-europe" && explicit.selectedOptimization != nil)
                #expect(server.entryRequests.first?.queryValue("locale") == "en-US")
                // No Experience response yet: the client's current selections are none.
                let current = try await client.fetchOptimizedEntry(id: "hero-home", from: source)
                #expect(current.entry["sys"]?["id"] == "hero-home" && current.selectedOptimization == nil)
                await #expect(throws: ContentfulDeliveryError.entryNotFound(id: "nope")) {
                    try await client.fetchOptimizedEntry(id: "nope", from: source)
                }
            }
        }
    }
}

@Suite("ContentfulDeliveryConfiguration")
struct ContentfulDeliveryConfigurationTests {
    private func make(_ configuration: ContentfulDeliveryConfiguration) throws(ContentfulDeliveryError) -> ContentfulDeliverySource {
        try ContentfulDeliverySource(configuration: configuration, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    @Test func hostsAndDefaults() {
        let delivery = ContentfulDeliveryConfiguration(spaceId: "s", accessToken: "t")
        #expect(delivery.effectiveBaseURL == "https://cdn.contentful.com" && delivery.environment == "master" && delivery.includeDepth == 10)
        #expect(ContentfulDeliveryConfiguration(spaceId: "s", accessToken: "t", api: .preview).effectiveBaseURL == "https://preview.contentful.com")
        #expect(ContentfulDeliveryConfiguration(spaceId: "s", accessToken: "t", baseURL: "http://127.0.0.1:9/").effectiveBaseURL == "http://127.0.0.1:9")
    }

    @Test func unusableConfigurationsAreTypedErrors() {
        #expect(throws: ContentfulDeliveryError.self) { try make(.init(spaceId: "", accessToken: "t")) }
        #expect(throws: ContentfulDeliveryError.self) { try make(.init(spaceId: "s", accessToken: "")) }
        #expect(throws: ContentfulDeliveryError.self) { try make(.init(spaceId: "s", accessToken: "t", includeDepth: 11)) }
        #expect(throws: ContentfulDeliveryError.self) { try make(.init(spaceId: "s", accessToken: "t", locale: "*")) }
        #expect(throws: ContentfulDeliveryError.self) { try make(.init(spaceId: "s", accessToken: "t", baseURL: "ftp://x")) }
    }

    @Test func theRequestURLEncodesEveryQueryForm() {
        let requester = ContentfulDeliveryRequester(
            configuration: .init(spaceId: "sp", environment: "staging", accessToken: "t", baseURL: "http://h", locale: "de-DE", includeDepth: 3),
            transport: UnconfiguredFetchTransport(), clock: ManualClock(), logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        #expect(requester.url(for: .init(selection: .id("a b"))) == "http://h/spaces/sp/environments/staging/entries?sys.id=a%20b&include=3&locale=de-DE")
        #expect(requester.url(for: .init(selection: .ids(["a", "b"]), locale: "en-US"))
            == "http://h/spaces/sp/environments/staging/entries?sys.id%5Bin%5D=a,b&limit=2&include=3&locale=en-US")
        #expect(requester.url(for: .init(selection: .field(contentType: "page", field: "slug", value: "a&b=c")))
            == "http://h/spaces/sp/environments/staging/entries?content_type=page&fields.slug=a%26b%3Dc&limit=2&include=3&locale=de-DE")
    }
}
