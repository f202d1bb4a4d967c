import OptimizationJSON
import OptimizationTransport
import Foundation
import HostPlatform
import Logging
import Synchronization

// MARK: The entry store

extension ContentfulDeliverySource {
    /// `ids` (one chunk) through the entry store: usable stored copies, then the CDA for the
    /// others (one id under the store's fetch claim), written back; stored copies within
    /// stale-if-error when the CDA fails transiently.
    func performThroughStore(
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
    func queueStoreInvalidation(_ invalidation: ContentfulInvalidation) {
        storeInvalidations?.enqueue(invalidation)
    }
}
