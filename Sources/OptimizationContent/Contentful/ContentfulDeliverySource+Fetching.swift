import OptimizationJSON
import OptimizationTransport
import Foundation
import HostPlatform
import Logging
import Synchronization

extension ContentfulDeliverySource {
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
    func fetchFromCDA(_ query: ContentfulEntryQuery, generation: Int) async -> Result<[ContentfulEntry], ContentfulDeliveryError> {
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
