import OptimizationContent
import OptimizationJSON
import OptimizationTransport
import Foundation
import HostPlatform
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
/// **Unknown ids** (negative cache). An id the CDA answered it does not have (unknown, or not
/// published) is answered as missing (``ContentfulDeliveryError/entryNotFound(id:)``, or in
/// ``ContentfulEntryBatch/missingIds``) without a request for the policy's
/// ``ContentfulCachePolicy/notFoundTimeToLive`` (default 30 s), so a client asking random ids in
/// a loop cannot spend the space's rate limit on repeats. At most
/// ``ContentfulCachePolicy/maximumNotFoundIds`` ids are remembered (oldest forgotten first).
/// ``invalidate(entryId:)`` of the id (a publish webhook), ``invalidateAll()``,
/// ``revalidateAll()`` and a remote invalidation forget it at once; failed requests (429, 5xx,
/// unreachable) are never remembered as missing. Queries by field (slugs) are not covered.
///
/// **Replicas.** With an `entryStore` (``ContentfulEntryStore``, shared by the replicas of a
/// service) fetches by id read through it and write back to it, and invalidations reach it (see
/// the protocol for the rules). ``applyRemoteInvalidation(_:)`` applies an invalidation another
/// replica made without passing it on; ``revalidateAll()`` is for a replica that may have missed
/// invalidations. A revision of an entry older than one this source returned is never taken from
/// the store (the CDA stays the authority).
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
    /// The shared store fetches by id go through; nil without one and for the Preview API.
    private let entryStore: (any ContentfulEntryStore)?
    /// The invalidations on their way to the entry store; nil without one.
    private let storeInvalidations: ContentfulStoreInvalidationQueue?

    /// A source for one space and environment. Cheap to keep for the life of the process; call
    /// ``shutdown()`` before releasing it.
    /// - Parameters:
    ///   - configuration: the space, environment, token, API, locale, timeouts and retries.
    ///   - cachePolicy: how fetched entries are kept (default: ``ContentfulCachePolicy/init(maximumEntries:maximumBytes:timeToLive:staleWhileRevalidate:staleIfError:notFoundTimeToLive:maximumNotFoundIds:)``'s defaults).
    ///   - transport: carries the HTTP requests; nil (the default) creates an
    ///     `HTTPFetchTransport` (AsyncHTTPClient) allowed to reach only the configured base URL.
    ///   - clock: drives TTLs, backoff and rate-limit waits. Inject a `ManualClock` in tests.
    ///   - entryStore: a store shared by the replicas of a service that fetches by id read
    ///     through and write back to (``ContentfulEntryStore``); nil (the default): none. Not used
    ///     with the Preview API.
    ///   - logger: receives fetch failures, retries and cache events; never the access token.
    /// - Throws: ``ContentfulDeliveryError/invalidConfiguration(_:)``.
    public init(
        configuration: ContentfulDeliveryConfiguration,
        cachePolicy: ContentfulCachePolicy = ContentfulCachePolicy(),
        clock: any HostClock = SystemClock(),
        transport: (any FetchTransport)? = nil,
        entryStore: (any ContentfulEntryStore)? = nil,
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
        let usedStore = settings.api == .delivery ? entryStore : nil
        self.entryStore = usedStore
        self.storeInvalidations = usedStore.map { ContentfulStoreInvalidationQueue(store: $0, logger: logger) }
        self.requester = ContentfulDeliveryRequester(configuration: settings, transport: chosenTransport, clock: clock, logger: logger)
    }

    /// Closes the connection pool of a transport the source created and waits for background
    /// refreshes and queued store invalidations to end. Fetches after it fail with a transport
    /// error.
    public func shutdown() async {
        await waitForPendingRefreshes()
        await waitForPendingStoreWork()
        try? await ownedTransport?.shutdown()
    }

    // MARK: Fetching

    /// The entry `id`, with its includes.
    /// - Parameters:
    ///   - id: the entry's `sys.id`.
    ///   - locale: overrides the configured locale for this fetch.
    /// - Throws: ``ContentfulDeliveryError/invalidEntryId`` when `id` is not a valid
    ///   ``ContentfulEntryId`` (nothing is asked); ``ContentfulDeliveryError/entryNotFound(id:)``
    ///   when the space has no such (published) entry, or had none when last asked within
    ///   ``ContentfulCachePolicy/notFoundTimeToLive`` (nothing is asked); the other
    ///   ``ContentfulDeliveryError`` cases.
    public func entry(id: String, locale: String? = nil) async throws(ContentfulDeliveryError) -> ContentfulEntry {
        guard ContentfulEntryId.isValid(id) else { throw .invalidEntryId }
        let query = ContentfulEntryQuery(selection: .id(id), locale: locale)
        if cache.isKnownMissing(query, now: clock.now()) {
            logger.debug("Contentful entry recently not found; not asked again", metadata: ["entry": "\(id)"])
            throw .entryNotFound(id: id)
        }
        let found = try await cachedFetch(query)
        guard let entry = found.first(where: { $0.id == id }) else { throw .entryNotFound(id: id) }
        return entry
    }

    /// The entries `ids`, in that order, with the ids the space does not have. Cached ids are
    /// served from the cache, and ids recently answered as missing are missing without a request
    /// (``ContentfulCachePolicy/notFoundTimeToLive``); the others are asked with `sys.id[in]`,
    /// ``idsPerRequest`` per request, one request per chunk (chunks run concurrently).
    /// - Throws: ``ContentfulDeliveryError/invalidEntryId`` when any of `ids` is not a valid
    ///   ``ContentfulEntryId`` (nothing is asked); the other ``ContentfulDeliveryError`` cases.
    public func entries(ids: [String], locale: String? = nil) async throws(ContentfulDeliveryError) -> ContentfulEntryBatch {
        guard ids.allSatisfy(ContentfulEntryId.isValid) else { throw .invalidEntryId }
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
                if !cache.isKnownMissing(query, now: now) { toFetch.append(id) }
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
    /// includes); the next fetch asks the CDA (or the entry store, for a copy written after this
    /// call). Fetches in flight do not store their answer. With an entry store, queues
    /// ``ContentfulEntryStore/invalidate(_:)`` (calls run in order, one at a time;
    /// ``waitForPendingStoreWork()`` waits for them). At most 1000 wait for a slow store: an
    /// identical one already waiting covers a repeat, and beyond that bound the waiting ones are
    /// replaced by one invalidation of everything (logged as a warning).
    ///
    /// Repeated invalidations of one entry, or of many, only affect the documents containing
    /// those entries: other cached entries, and fetches of them in flight, are kept. The cache
    /// remembers the last invalidation of at most 10,000 ids; beyond that the oldest ones are
    /// forgotten as a block and count as one invalidation of everything at their time (copies in
    /// the entry store written before it are not taken as fresh; the memory cache is kept).
    /// - Throws: ``ContentfulDeliveryError/invalidEntryId`` when `entryId` is not a valid
    ///   ``ContentfulEntryId``: nothing is invalidated or sent to the entry store.
    public func invalidate(entryId: String) throws(ContentfulDeliveryError) {
        guard ContentfulEntryId.isValid(entryId) else { throw .invalidEntryId }
        cache.invalidate(entryId: entryId, now: clock.now())
        queueStoreInvalidation(ContentfulInvalidation(
            spaceId: configuration.spaceId, environment: configuration.environment, entryId: entryId))
    }

    /// Drops the whole cache. Fetches in flight do not store their answer. With an entry store,
    /// queues ``ContentfulEntryStore/invalidate(_:)`` for the whole space and environment.
    public func invalidateAll() {
        cache.invalidateAll(now: clock.now())
        queueStoreInvalidation(ContentfulInvalidation(
            spaceId: configuration.spaceId, environment: configuration.environment, entryId: nil))
    }

    /// Applies an invalidation made by another replica (received from an invalidation bus): as
    /// ``invalidate(entryId:)`` or ``invalidateAll()``, without calling the entry store. Ignored
    /// when its space or environment is not this source's, and when its entry id is not a valid
    /// ``ContentfulEntryId`` (no cached entry can have it; logged at notice level, without the
    /// id).
    public func applyRemoteInvalidation(_ invalidation: ContentfulInvalidation) {
        guard invalidation.spaceId == configuration.spaceId, invalidation.environment == configuration.environment else { return }
        if let entryId = invalidation.entryId {
            guard ContentfulEntryId.isValid(entryId) else {
                logger.notice("ignored a remote invalidation whose entry id is not a valid Contentful id",
                              metadata: ["length": "\(entryId.utf8.count)"])
                return
            }
            cache.invalidate(entryId: entryId, now: clock.now())
        } else {
            cache.invalidateAll(now: clock.now())
        }
    }

    /// For a replica that may have missed invalidations (its bus connection was lost): every
    /// cached copy stays, but is served again only as a stale-if-error fallback until a fetch
    /// replaces it; fetches in flight do not store their answer. A copy in the entry store written
    /// before this call is not taken as fresh either (a missed invalidation may not have reached
    /// the store: it could have been made while the store was unreachable), so each entry is
    /// fetched again from the CDA, or read from a copy another replica wrote after this call. No
    /// revision older than one already returned is taken from the store.
    public func revalidateAll() {
        cache.revalidateAll(now: clock.now())
    }

    /// Waits until the store invalidations queued so far have ended (and any queued meanwhile).
    public func waitForPendingStoreWork() async {
        await storeInvalidations?.waitUntilEmpty()
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
        if let entryStore {
            switch query.selection {
            case .id(let id): return await performThroughStore(entryStore, ids: [id], locale: query.locale, generation: generation)
            case .ids(let ids): return await performThroughStore(entryStore, ids: ids, locale: query.locale, generation: generation)
            case .field: break
            }
        }
        return await fetchFromCDA(query, generation: generation)
    }

    /// Fetches `query` from the CDA and stores the answer in the cache (unless invalidated since
    /// `generation`).
    private func fetchFromCDA(_ query: ContentfulEntryQuery, generation: Int) async -> Result<[ContentfulEntry], ContentfulDeliveryError> {
        do throws(ContentfulDeliveryError) {
            let body = try await requester.fetch(query)
            let fetched = try ContentfulCollectionSplitter.entries(in: body, includeDepth: configuration.includeDepth)
            let now = clock.now()
            switch query.selection {
            case .id(let id) where !fetched.contains(where: { $0.id == id }):
                cache.recordMissing(CollectionOfOne(id), locale: query.locale, now: now, generation: generation)
            case .ids(let ids):
                let returned = Set(fetched.map(\.id))
                cache.recordMissing(ids.filter { !returned.contains($0) }, locale: query.locale, now: now, generation: generation)
            default:
                break
            }
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

// MARK: The entry store

extension ContentfulDeliverySource {
    /// `ids` (one chunk) through the entry store: usable stored copies, then the CDA for the
    /// others (one id under the store's fetch claim), written back; stored copies within
    /// stale-if-error when the CDA fails transiently.
    private func performThroughStore(
        _ store: any ContentfulEntryStore, ids: [String], locale: String?, generation: Int
    ) async -> Result<[ContentfulEntry], ContentfulDeliveryError> {
        let keys = ids.map { storeKey($0, locale: locale) }
        let rows = await store.entries(for: keys)
        let now = clock.now()
        var found: [ContentfulEntry] = []
        var remaining: [String] = []
        for (id, key) in zip(ids, keys) {
            if let row = rows[key], let entry = usable(row, locale: locale, fresh: true, now: now) {
                found.append(cache.store(entry, for: ContentfulEntryQuery(selection: .id(id), locale: locale),
                                         now: now - row.age.inMilliseconds, generation: generation))
            } else {
                remaining.append(id)
            }
        }
        if remaining.isEmpty { return .success(found) }
        let fetched: Result<[ContentfulEntry], ContentfulDeliveryError>
        if remaining.count == 1 {
            let id = remaining[0]
            let key = storeKey(id, locale: locale)
            fetched = await store.withFetchClaim(for: key) { current in
                let now = self.clock.now()
                if let current, let entry = self.usable(current, locale: locale, fresh: true, now: now) {
                    // Another replica fetched it while this one waited for the claim.
                    return (.success([self.cache.store(entry, for: ContentfulEntryQuery(selection: .id(id), locale: locale),
                                                       now: now - current.age.inMilliseconds, generation: generation)]), nil)
                }
                let result = await self.fetchFromCDA(ContentfulEntryQuery(selection: .id(id), locale: locale), generation: generation)
                guard case .success(let entries) = result, let entry = entries.first(where: { $0.id == id }),
                      !self.cache.isInvalidated(anyOf: ContentfulCollectionSplitter.referencedIds(of: entry), since: generation)
                else { return (result, nil) }
                return (result, self.storedCopy(of: entry, key: key))
            }
        } else {
            fetched = await fetchFromCDA(ContentfulEntryQuery(selection: .ids(remaining), locale: locale), generation: generation)
            if case .success(let entries) = fetched {
                // Only answers no invalidation reached while they were fetched are written back.
                let current = entries.filter {
                    !cache.isInvalidated(anyOf: ContentfulCollectionSplitter.referencedIds(of: $0), since: generation)
                }
                if !current.isEmpty { await store.save(current.map { storedCopy(of: $0, key: storeKey($0.id, locale: locale)) }) }
            }
        }
        switch fetched {
        case .success(let entries):
            return .success(found + entries)
        case .failure(let error):
            guard error.isTransient else { return .failure(error) }
            let now = clock.now()
            let fallback = zip(remaining, remaining.map { storeKey($0, locale: locale) }).compactMap { _, key in
                rows[key].flatMap { usable($0, locale: locale, fresh: false, now: now) }
            }
            guard fallback.count == remaining.count else { return .failure(error) }
            logger.warning("Contentful failed; serving copies from the entry store (stale-if-error)",
                           metadata: ["error": "\(error)", "count": "\(fallback.count)"])
            for entry in fallback { cache.recordServed(entry, locale: locale) }
            return .success(found + fallback)
        }
    }

    /// The prepared entry of a stored copy when this source may serve it: not older than a
    /// revision already served; `fresh`: not invalidated, within the time to live and written
    /// after the last local invalidation of an entry it contains; else within stale-if-error.
    private func usable(_ row: ContentfulStoredEntry, locale: String?, fresh: Bool, now: Double) -> ContentfulEntry? {
        let age = row.age.inMilliseconds
        if fresh {
            guard !row.isInvalidated, age < cachePolicy.timeToLive.inMilliseconds,
                  now - age > cache.lastInvalidation(of: row.referencedIds + [row.key.entryId])
            else { return nil }
        } else {
            guard age < cachePolicy.timeToLive.inMilliseconds + cachePolicy.staleIfError.inMilliseconds else { return nil }
        }
        if let served = cache.servedRevision(of: row.key.entryId, locale: locale), row.revision < served { return nil }
        guard let entry = try? ContentfulEntry(jsonData: Array(row.jsonText.utf8)), entry.id == row.key.entryId else {
            logger.warning("the entry store holds a copy that is not the entry's document; ignored", metadata: ["key": "\(row.key)"])
            return nil
        }
        return entry
    }

    private func storeKey(_ id: String, locale: String?) -> ContentfulEntryStoreKey {
        ContentfulEntryStoreKey(
            spaceId: configuration.spaceId, environment: configuration.environment,
            locale: locale ?? configuration.locale ?? "", entryId: id)
    }

    private func storedCopy(of entry: ContentfulEntry, key: ContentfulEntryStoreKey) -> ContentfulStoredEntry {
        ContentfulStoredEntry(
            key: key, revision: ContentfulCollectionSplitter.itemRevision(of: entry) ?? 0,
            fingerprint: ContentfulCollectionSplitter.revisionFingerprint(of: entry),
            referencedIds: ContentfulCollectionSplitter.referencedIds(of: entry).sorted(), jsonText: entry.jsonText)
    }

    /// Queues `invalidation` for the entry store, after the ones queued before.
    private func queueStoreInvalidation(_ invalidation: ContentfulInvalidation) {
        storeInvalidations?.enqueue(invalidation)
    }
}
