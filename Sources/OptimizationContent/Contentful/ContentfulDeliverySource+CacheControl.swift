import OptimizationJSON
import OptimizationTransport
import Foundation
import HostPlatform
import Logging
import Synchronization

extension ContentfulDeliverySource {
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
}
