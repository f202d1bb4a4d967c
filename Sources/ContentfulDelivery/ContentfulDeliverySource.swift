import OptimizationContent
import OptimizationJSON
import OptimizationTransport
import Foundation
import JavaScriptHost
import Logging
import Synchronization

/// Fetches Contentful entries from the Content Delivery (or Preview) API, ready to resolve:
/// every result is a prepared `ContentfulEntry` in collection form (the item plus the
/// experiences, variants and assets it links, `include` levels deep), so
/// `OptimizationClient/resolveOptimizedEntry(baseline:selectedOptimizations:)` can use it as is.
///
/// ```swift
/// let source = try ContentfulDeliverySource(
///     configuration: .init(spaceId: "abc123", accessToken: token), logger: logger)
/// let hero = try await source.entry(id: "hero-home")
/// let resolved = client.resolveOptimizedEntry(baseline: hero, selectedOptimizations: selections)
/// ```
///
/// **Queries.** ``entry(id:locale:)`` uses the collection endpoint with `sys.id` (the
/// single-entry endpoint drops the includes); ``entries(ids:locale:)`` asks `sys.id[in]` in chunks
/// of ``idsPerRequest`` ids, one request per chunk; ``entry(contentType:field:value:locale:)``
/// asks `content_type` + `fields.<field>` and needs exactly one match.
///
/// **Cache** (``ContentfulCachePolicy``, times on the injected clock). Shared by every caller of
/// the source. Fresh copies are served without a request; expired ones within
/// stale-while-revalidate are served at once while one background request refreshes them; when
/// the CDA fails transiently, copies within stale-if-error are served (and logged). Concurrent
/// misses for the same query make one request (single-flight). ``invalidate(entryId:)`` drops
/// every cached document containing that entry (use it from publish/unpublish webhooks);
/// ``invalidateAll()`` drops everything. A refetch whose item and includes have the same
/// `sys.revision`s returns the instance already cached, so engines transfer nothing again.
///
/// **Errors.** Every method throws only ``ContentfulDeliveryError`` (see
/// ``ContentfulDeliveryConfiguration`` for retries, rate-limit waits and the per-fetch deadline).
///
/// **Threading.** A `Sendable` class: share one per space/environment/token across the whole
/// process and call it from any task. Call ``shutdown()`` when done (it closes the connection
/// pool of a transport the source created).
public final class ContentfulDeliverySource: Sendable {
    /// Ids per `sys.id[in]` request (the CDA's default page size).
    public static let idsPerRequest = 100

    /// Where and how the source fetches: space, environment, API, locale, timeouts and retries.
    public let configuration: ContentfulDeliveryConfiguration
    /// How fetched entries are cached, shared by every caller of this source.
    public let cachePolicy: ContentfulCachePolicy
    let cache: ContentfulEntryCache
    private let requester: ContentfulDeliveryRequester
    private let ownedTransport: HTTPFetchTransport?
    private let clock: any HostClock
    private let logger: Logger
    private let flights = Mutex<[ContentfulEntryQuery: Task<Result<[ContentfulEntry], ContentfulDeliveryError>, Never>]>([:])
    private let refreshes = Mutex<[ContentfulEntryQuery: Task<Void, Never>]>([:])

    /// A source for one space and environment. Cheap to keep for the life of the process; call
    /// ``shutdown()`` before releasing it.
    /// - Parameters:
    ///   - configuration: the space, environment, token, API, locale, timeouts and retries.
    ///   - cachePolicy: how fetched entries are kept (default: ``ContentfulCachePolicy/init(maximumEntries:maximumBytes:timeToLive:staleWhileRevalidate:staleIfError:)``'s defaults).
    ///   - transport: carries the HTTP requests; nil (the default) creates an
    ///     `HTTPFetchTransport` (AsyncHTTPClient) allowed to reach only the configured base URL.
    ///   - clock: drives TTLs, backoff and rate-limit waits. Inject a `ManualClock` in tests.
    ///   - logger: receives fetch failures, retries and cache events; never the access token.
    /// - Throws: ``ContentfulDeliveryError/invalidConfiguration(_:)``.
    public init(
        configuration: ContentfulDeliveryConfiguration,
        cachePolicy: ContentfulCachePolicy = ContentfulCachePolicy(),
        clock: any HostClock = SystemClock(),
        transport: (any FetchTransport)? = nil,
        logger: Logger
    ) throws(ContentfulDeliveryError) {
        guard !configuration.spaceId.isEmpty else { throw .invalidConfiguration("the space id is empty") }
        guard !configuration.environment.isEmpty else { throw .invalidConfiguration("the environment is empty") }
        guard !configuration.accessToken.isEmpty else { throw .invalidConfiguration("the access token is empty") }
        guard (0...10).contains(configuration.includeDepth) else {
            throw .invalidConfiguration("include depth must be between 0 and 10, not \(configuration.includeDepth)")
        }
        guard configuration.locale != "*" else {
            throw .invalidConfiguration("locale \"*\" returns every locale; the resolver needs one locale")
        }
        var settings = configuration
        settings.maximumAttempts = max(1, settings.maximumAttempts)
        settings.maximumRateLimitWaits = max(0, settings.maximumRateLimitWaits)
        let chosenTransport: any FetchTransport
        if let transport {
            chosenTransport = transport
            ownedTransport = nil
        } else {
            do {
                let created = try HTTPFetchTransport(
                    configuration: .init(
                        allowedBaseURLs: [settings.effectiveBaseURL],
                        requestTimeout: settings.requestTimeout,
                        maximumResponseBodyBytes: settings.maximumResponseBodyBytes),
                    logger: logger)
                chosenTransport = created
                ownedTransport = created
            } catch {
                throw .invalidConfiguration("\(error)")
            }
        }
        self.configuration = settings
        self.cachePolicy = cachePolicy
        self.cache = ContentfulEntryCache(policy: cachePolicy)
        self.clock = clock
        self.logger = logger
        self.requester = ContentfulDeliveryRequester(configuration: settings, transport: chosenTransport, clock: clock, logger: logger)
    }

    /// Closes the connection pool of a transport the source created and waits for background
    /// refreshes to end. Fetches after it fail with a transport error.
    public func shutdown() async {
        await waitForPendingRefreshes()
        try? await ownedTransport?.shutdown()
    }

    // MARK: Fetching

    /// The entry `id`, with its includes.
    /// - Parameters:
    ///   - id: the entry's `sys.id`.
    ///   - locale: overrides the configured locale for this fetch.
    /// - Throws: ``ContentfulDeliveryError/entryNotFound(id:)`` when the space has no such
    ///   (published) entry; the other ``ContentfulDeliveryError`` cases.
    public func entry(id: String, locale: String? = nil) async throws(ContentfulDeliveryError) -> ContentfulEntry {
        let query = ContentfulEntryQuery(selection: .id(id), locale: locale)
        let found = try await cachedFetch(query)
        guard let entry = found.first(where: { $0.id == id }) else { throw .entryNotFound(id: id) }
        return entry
    }

    /// The entries `ids`, in that order, with the ids the space does not have. Cached ids are
    /// served from the cache; the others are asked with `sys.id[in]`, ``idsPerRequest`` per
    /// request, one request per chunk (chunks run concurrently).
    public func entries(ids: [String], locale: String? = nil) async throws(ContentfulDeliveryError) -> ContentfulEntryBatch {
        var unique: [String] = []
        var seen: Set<String> = []
        for id in ids where seen.insert(id).inserted { unique.append(id) }
        var found: [String: ContentfulEntry] = [:]
        var toFetch: [String] = []
        var staleCopies: [String: ContentfulEntry] = [:]
        var toRevalidate: [String] = []
        let now = clock.now()
        for id in unique {
            let query = ContentfulEntryQuery(selection: .id(id), locale: locale)
            switch cache.lookup(query, now: now) {
            case (let entry, .fresh)?:
                found[id] = entry
            case (let entry, .revalidate)?:
                found[id] = entry
                toRevalidate.append(id)
            case (let entry, .staleIfError)?:
                staleCopies[id] = entry
                toFetch.append(id)
            default:
                toFetch.append(id)
            }
        }
        // Stale copies are refreshed in the background, also in chunks (never one request per id).
        for chunk in Self.chunked(toRevalidate) {
            refreshInBackground(ContentfulEntryQuery(selection: .ids(chunk), locale: locale))
        }
        let chunks = Self.chunked(toFetch)
        let results = await withTaskGroup(of: ([String], Result<[ContentfulEntry], ContentfulDeliveryError>).self) { group in
            for chunk in chunks {
                group.addTask {
                    (chunk, await self.flight(ContentfulEntryQuery(selection: .ids(chunk), locale: locale)))
                }
            }
            var all: [([String], Result<[ContentfulEntry], ContentfulDeliveryError>)] = []
            for await result in group { all.append(result) }
            return all
        }
        for (chunk, result) in results {
            switch result {
            case .success(let entries):
                for entry in entries { found[entry.id] = entry }
            case .failure(let error):
                guard error.isTransient, chunk.allSatisfy({ staleCopies[$0] != nil }) else { throw error }
                logger.warning("Contentful failed; serving cached copies (stale-if-error)",
                               metadata: ["error": "\(error)", "count": "\(chunk.count)"])
                for id in chunk { found[id] = staleCopies[id] }
            }
        }
        return ContentfulEntryBatch(
            entries: unique.compactMap { found[$0] }, missingIds: unique.filter { found[$0] == nil })
    }

    /// The one entry of `contentType` whose `fields.<field>` equals `value` (a slug).
    /// - Throws: ``ContentfulDeliveryError/noMatch(contentType:field:value:)``,
    ///   ``ContentfulDeliveryError/ambiguousMatch(contentType:field:value:ids:)``, or the other cases.
    public func entry(
        contentType: String, field: String, value: String, locale: String? = nil
    ) async throws(ContentfulDeliveryError) -> ContentfulEntry {
        let query = ContentfulEntryQuery(selection: .field(contentType: contentType, field: field, value: value), locale: locale)
        let found = try await cachedFetch(query)
        guard let first = found.first else { throw .noMatch(contentType: contentType, field: field, value: value) }
        guard found.count == 1 else {
            throw .ambiguousMatch(contentType: contentType, field: field, value: value, ids: found.map(\.id))
        }
        return first
    }

    // MARK: Cache control

    /// Drops every cached document that contains entry `entryId` (as the item or in its
    /// includes); the next fetch asks the CDA. Fetches in flight do not store their answer.
    public func invalidate(entryId: String) {
        cache.invalidate(entryId: entryId)
    }

    /// Drops the whole cache. Fetches in flight do not store their answer.
    public func invalidateAll() {
        cache.invalidateAll()
    }

    /// Number of cached queries.
    public var cachedQueryCount: Int { cache.count }

    /// Bytes of entry JSON cached.
    public var cachedBytes: Int { cache.totalBytes }

    /// Waits until every stale-while-revalidate refresh started so far has ended.
    public func waitForPendingRefreshes() async {
        while let next = refreshes.withLock({ $0.values.first }) {
            await next.value
        }
    }

    // MARK: Internals

    private static func chunked(_ ids: [String]) -> [[String]] {
        stride(from: 0, to: ids.count, by: idsPerRequest).map { Array(ids[$0..<min($0 + idsPerRequest, ids.count)]) }
    }

    /// Serves `query` from the cache when allowed, else from one shared request.
    private func cachedFetch(_ query: ContentfulEntryQuery) async throws(ContentfulDeliveryError) -> [ContentfulEntry] {
        let cached = cache.lookup(query, now: clock.now())
        switch cached {
        case (let entry, .fresh)?:
            return [entry]
        case (let entry, .revalidate)?:
            refreshInBackground(query)
            return [entry]
        default:
            break
        }
        switch await flight(query) {
        case .success(let entries):
            return entries
        case .failure(let error):
            if error.isTransient, case (let entry, .staleIfError)? = cached {
                logger.warning("Contentful failed; serving the cached copy (stale-if-error)",
                               metadata: ["error": "\(error)", "entry": "\(entry.id)"])
                return [entry]
            }
            throw error
        }
    }

    /// Joins the request in flight for `query`, or starts it. The request stores its answer in
    /// the cache (unless invalidated meanwhile) and returns the entries to use.
    private func flight(_ query: ContentfulEntryQuery) async -> Result<[ContentfulEntry], ContentfulDeliveryError> {
        let task = flights.withLock { flights -> Task<Result<[ContentfulEntry], ContentfulDeliveryError>, Never> in
            if let running = flights[query] { return running }
            let task = Task { await self.perform(query) }
            flights[query] = task
            return task
        }
        return await task.value
    }

    private func perform(_ query: ContentfulEntryQuery) async -> Result<[ContentfulEntry], ContentfulDeliveryError> {
        defer { _ = flights.withLock { $0.removeValue(forKey: query) } }
        let generation = cache.generation
        do throws(ContentfulDeliveryError) {
            let body = try await requester.fetch(query)
            let fetched = try ContentfulCollectionSplitter.entries(in: body, includeDepth: configuration.includeDepth)
            let now = clock.now()
            var kept: [ContentfulEntry] = []
            for entry in fetched {
                switch query.selection {
                case .id, .ids:
                    kept.append(cache.store(entry, for: ContentfulEntryQuery(selection: .id(entry.id), locale: query.locale),
                                            now: now, generation: generation))
                case .field:
                    let stored = fetched.count == 1 ? cache.store(entry, for: query, now: now, generation: generation) : entry
                    kept.append(stored)
                }
            }
            return .success(kept)
        } catch {
            logger.debug("Contentful fetch failed", metadata: ["query": "\(query)", "error": "\(error)"])
            return .failure(error)
        }
    }

    /// Starts one background refresh of `query` unless one is running.
    private func refreshInBackground(_ query: ContentfulEntryQuery) {
        refreshes.withLock { refreshes in
            guard refreshes[query] == nil else { return }
            refreshes[query] = Task {
                if case .failure(let error) = await self.flight(query) {
                    self.logger.notice("Contentful background refresh failed; the cached copy stays",
                                       metadata: ["query": "\(query)", "error": "\(error)"])
                }
                _ = self.refreshes.withLock { $0.removeValue(forKey: query) }
            }
        }
    }
}
