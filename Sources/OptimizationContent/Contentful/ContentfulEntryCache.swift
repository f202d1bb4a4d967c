import OptimizationJSON
import OptimizationTransport
import OrderedCollections
import Synchronization

/// The entry cache of a ``ContentfulDeliverySource``: bounded (entries and bytes, least recently
/// used evicted first), with fetch times on the source's clock, and identity-preserving stores
/// (an entry stored again with the same revisions keeps its prepared `ContentfulEntry`).
///
/// **Invalidations** are numbered (``generation``) and remembered per id in a bounded
/// ``ContentfulInvalidationLog``: a fetch stores its answer unless an entry the answer contains
/// was invalidated (or everything was) after the fetch began, so invalidations of other entries,
/// however many, never keep an answer out of the cache.
///
/// **Missing ids** (``ContentfulMissingEntries``, the policy's `notFoundTimeToLive`): ids a
/// fetch was told the space does not have are answered as missing for that time; every
/// invalidation that drops an id's copies forgets it as missing too, a fetch that began before
/// such an invalidation does not record it, and storing a copy of the id forgets it.
///
/// **Threading.** Thread-safe (one lock, held for dictionary work only, never across a fetch).
final class ContentfulEntryCache: Sendable {
    /// How usable a cached copy is at a given time.
    enum Freshness {
        case fresh
        /// Expired but within stale-while-revalidate.
        case revalidate
        /// Expired beyond stale-while-revalidate but within stale-if-error.
        case staleIfError
        /// Too old for anything.
        case expired
    }

    struct Stored {
        var entry: ContentfulEntry
        var fingerprint: String
        var referencedIds: Set<String>
        var bytes: Int
        var fetchedAt: Double
        /// Set by ``revalidateAll(now:)``: served again only as a stale-if-error fallback, until
        /// a fetch replaces it.
        var mustRevalidate = false
    }

    /// A prepared entry still alive somewhere (cache or caller), by id: what keeps identity
    /// across invalidations and evictions when the revisions did not change.
    private final class WeakEntry: @unchecked Sendable {
        // Only touched under the cache's lock.
        weak var entry: ContentfulEntry?
        let fingerprint: String
        init(_ entry: ContentfulEntry, fingerprint: String) {
            self.entry = entry
            self.fingerprint = fingerprint
        }
    }

    private struct State {
        var stored: OrderedDictionary<ContentfulEntryQuery, Stored> = [:]
        var prepared: [String: WeakEntry] = [:]
        var totalBytes = 0
        /// Raised by every invalidation: the sequence number of the last one.
        var generation = 0
        /// The highest item `sys.revision` returned per locale and entry id (``floorKey``).
        var servedRevisions: [String: Int] = [:]
        /// When (sequence and clock ms) each entry id was last invalidated here, and everything.
        var invalidations = ContentfulInvalidationLog(capacity: ContentfulEntryCache.rememberedInvalidations)
        /// The ids recently answered as not in the space (the negative cache).
        var missing: ContentfulMissingEntries
    }

    /// Most ids whose served revision is remembered.
    static let rememberedIds = 100_000
    /// Most ids whose last invalidation is remembered (``ContentfulInvalidationLog``).
    static let rememberedInvalidations = 10_000

    let policy: ContentfulCachePolicy
    private let state: Mutex<State>

    init(policy: ContentfulCachePolicy) {
        self.policy = policy
        state = Mutex(State(missing: ContentfulMissingEntries(
            timeToLive: policy.notFoundTimeToLive, capacity: policy.maximumNotFoundIds)))
    }

    /// True when `query`'s id (an `.id` query) was answered as not in the space less than the
    /// policy's `notFoundTimeToLive` before `now`, and not invalidated or stored since.
    func isKnownMissing(_ query: ContentfulEntryQuery, now: Double) -> Bool {
        state.withLock { $0.missing.contains(query, now: now) }
    }

    /// Records `ids`, which a fetch begun at `generation` was told the space does not have, as
    /// missing in `locale` at `now`; an id invalidated (or everything) since `generation` is not
    /// recorded (the answer may predate its publication).
    func recordMissing(_ ids: some Sequence<String>, locale: String?, now: Double, generation: Int) {
        state.withLock { state in
            for id in ids where !Self.isInvalidated(anyOf: CollectionOfOne(id), since: generation, in: state) {
                state.missing.record(ContentfulEntryQuery(selection: .id(id), locale: locale), now: now)
            }
        }
    }

    /// The copy for `query` and its freshness at `now`, marked as recently used.
    func lookup(_ query: ContentfulEntryQuery, now: Double) -> (ContentfulEntry, Freshness)? {
        state.withLock { state in
            guard let index = state.stored.index(forKey: query) else { return nil }
            let stored = state.stored.values[index]
            state.stored.remove(at: index)
            state.stored[query] = stored
            let age = now - stored.fetchedAt
            let freshness: Freshness
            if stored.mustRevalidate {
                freshness = age < policy.timeToLive.inMilliseconds + policy.staleIfError.inMilliseconds ? .staleIfError : .expired
            } else if age < policy.timeToLive.inMilliseconds {
                freshness = .fresh
            } else if age < policy.timeToLive.inMilliseconds + policy.staleWhileRevalidate.inMilliseconds {
                freshness = .revalidate
            } else if age < policy.timeToLive.inMilliseconds + policy.staleIfError.inMilliseconds {
                freshness = .staleIfError
            } else {
                freshness = .expired
            }
            return (stored.entry, freshness)
        }
    }

    /// The current invalidation generation (take it before fetching; pass it to ``store``).
    var generation: Int { state.withLock { $0.generation } }

    /// Keeps `entry` for `query`, fetched at `now`, unless an entry or asset its document contains
    /// was invalidated (or everything was) since `generation`, or the cache is disabled. Returns
    /// the entry callers should use: the instance prepared earlier with the same id and revisions
    /// while one is still alive (cached or held by a caller, even after an invalidation), else
    /// `entry`.
    @discardableResult
    func store(_ entry: ContentfulEntry, for query: ContentfulEntryQuery, now: Double, generation: Int) -> ContentfulEntry {
        let fingerprint = ContentfulCollectionSplitter.revisionFingerprint(of: entry)
        let referencedIds = ContentfulCollectionSplitter.referencedIds(of: entry)
        return state.withLock { state -> ContentfulEntry in
            var kept = entry
            state.missing.remove(ContentfulEntryQuery(selection: .id(entry.id), locale: query.locale))
            Self.recordServed(kept, locale: query.locale, in: &state)
            if let known = state.prepared[entry.id], known.fingerprint == fingerprint, let alive = known.entry {
                kept = alive
            } else {
                if state.prepared.count >= 2 * max(policy.maximumEntries, 64) {
                    state.prepared = state.prepared.filter { $0.value.entry != nil }
                }
                state.prepared[entry.id] = WeakEntry(entry, fingerprint: fingerprint)
            }
            guard !Self.isInvalidated(anyOf: referencedIds, since: generation, in: state),
                  policy.timeToLive.inMilliseconds > 0 || policy.staleIfError.inMilliseconds > 0, policy.maximumEntries > 0
            else { return kept }
            let bytes = kept.jsonText.utf8.count
            guard bytes <= policy.maximumBytes else { return kept }
            if let old = state.stored.removeValue(forKey: query) { state.totalBytes -= old.bytes }
            state.stored[query] = Stored(
                entry: kept, fingerprint: fingerprint, referencedIds: referencedIds, bytes: bytes, fetchedAt: now)
            state.totalBytes += bytes
            while state.stored.count > policy.maximumEntries || state.totalBytes > policy.maximumBytes {
                let evicted = state.stored.removeFirst()
                state.totalBytes -= evicted.value.bytes
            }
            return kept
        }
    }

    /// Drops every cached query whose document contains `entryId` (the entry itself, or an
    /// included experience, variant or asset), and keeps fetches in flight whose answer contains
    /// it from storing.
    func invalidate(entryId: String, now: Double) {
        state.withLock { state in
            state.generation += 1
            state.invalidations.record(entryId, at: .init(sequence: state.generation, time: now))
            state.missing.remove(entryId: entryId)
            for (query, stored) in state.stored where stored.referencedIds.contains(entryId) {
                state.stored.removeValue(forKey: query)
                state.totalBytes -= stored.bytes
            }
        }
    }

    /// Drops everything, and keeps fetches in flight from storing.
    func invalidateAll(now: Double) {
        state.withLock { state in
            state.generation += 1
            state.invalidations.recordAll(at: .init(sequence: state.generation, time: now))
            state.missing.removeAll()
            state.stored.removeAll()
            state.totalBytes = 0
        }
    }

    /// Keeps every cached copy, but serves it again only as a stale-if-error fallback until a
    /// fetch replaces it; keeps fetches in flight from storing; stored copies written before `now`
    /// are not taken as fresh.
    func revalidateAll(now: Double) {
        state.withLock { state in
            state.generation += 1
            state.invalidations.recordAll(at: .init(sequence: state.generation, time: now))
            state.missing.removeAll()
            for index in state.stored.values.indices { state.stored.values[index].mustRevalidate = true }
        }
    }

    /// Remembers `entry`'s item revision as served (for `locale`, nil: the configured one).
    func recordServed(_ entry: ContentfulEntry, locale: String?) {
        state.withLock { Self.recordServed(entry, locale: locale, in: &$0) }
    }

    private static func recordServed(_ entry: ContentfulEntry, locale: String?, in state: inout State) {
        guard let revision = ContentfulCollectionSplitter.itemRevision(of: entry) else { return }
        let key = floorKey(entry.id, locale: locale)
        if state.servedRevisions.count >= rememberedIds, state.servedRevisions[key] == nil {
            // Forget the ids no longer cached; their floor is lost (documented bound).
            let cachedKeys = Set(state.stored.keys.compactMap { query -> String? in
                if case .id(let id) = query.selection { return floorKey(id, locale: query.locale) } else { return nil }
            })
            state.servedRevisions = state.servedRevisions.filter { cachedKeys.contains($0.key) }
        }
        state.servedRevisions[key] = max(state.servedRevisions[key] ?? revision, revision)
    }

    private static func floorKey(_ id: String, locale: String?) -> String { "\(locale ?? "")\u{1F}\(id)" }

    /// The highest item revision of `id` returned for `locale` (nil: none returned).
    func servedRevision(of id: String, locale: String?) -> Int? {
        state.withLock { $0.servedRevisions[Self.floorKey(id, locale: locale)] }
    }

    /// The last time (clock ms) any of `ids`, or everything, was invalidated here.
    func lastInvalidation(of ids: some Sequence<String>) -> Double {
        state.withLock { state in
            ids.reduce(state.invalidations.floor.time) { max($0, state.invalidations.lastMark(of: $1).time) }
        }
    }

    /// True when any of `ids`, or everything, was invalidated after `generation`: an answer
    /// containing them, fetched since, may be stale.
    func isInvalidated(anyOf ids: some Sequence<String>, since generation: Int) -> Bool {
        state.withLock { Self.isInvalidated(anyOf: ids, since: generation, in: $0) }
    }

    private static func isInvalidated(anyOf ids: some Sequence<String>, since generation: Int, in state: State) -> Bool {
        state.invalidations.floor.sequence > generation || ids.contains { state.invalidations.lastMark(of: $0).sequence > generation }
    }

    /// Number of ids whose last invalidation is remembered (at most ``rememberedInvalidations``).
    var rememberedInvalidationCount: Int { state.withLock { $0.invalidations.count } }

    /// Number of ids held as missing (``ContentfulMissingEntries``).
    var missingCount: Int { state.withLock { $0.missing.count } }

    /// Number of cached queries.
    var count: Int { state.withLock { $0.stored.count } }

    /// Bytes of entry JSON kept.
    var totalBytes: Int { state.withLock { $0.totalBytes } }
}
