
/// A store of fetched entries shared by the replicas of a service (for example a database
/// table), which a ``ContentfulDeliverySource`` reads through before asking the CDA and writes
/// back to after a fetch. Pass one as `entryStore:` when creating the source.
///
/// **What the source does with it** (only for ``ContentfulDeliveryConfiguration/API/delivery``
/// fetches by id; queries by field and Preview API fetches never touch it):
/// - on a miss it reads the ids with ``entries(for:)`` and serves every copy that is usable: not
///   invalidated, younger than the cache policy's time to live, written after the last
///   invalidation this source applied to an entry it contains, and not older (by the item's
///   `sys.revision`) than a revision this source already served;
/// - it fetches the other ids from the CDA, a single id inside ``withFetchClaim(for:_:)`` (one
///   replica fetches an entry at a time), several ids at once followed by ``save(_:)``;
/// - when the CDA fails transiently, a stored copy within stale-if-error (invalidated or not) is
///   served, never one older than a revision already served;
/// - ``ContentfulDeliverySource/invalidate(entryId:)`` and
///   ``ContentfulDeliverySource/invalidateAll()`` call ``invalidate(_:)`` (in call order, one at
///   a time; a repeat of an invalidation still waiting is merged into it, and when 1000 are
///   waiting they are replaced by one invalidation of everything).
///
/// **Contract for implementations.** Every method is called from any task and must be bounded
/// in time: a store that cannot answer (its database is gone) answers "nothing stored" or does
/// nothing, logs, and returns promptly; it never throws into the source. ``save(_:)`` and the
/// write-back of ``withFetchClaim(for:_:)`` must never let a lower ``ContentfulStoredEntry/revision``
/// replace a higher one, and must not clear an invalidation with a copy whose
/// ``ContentfulStoredEntry/fingerprint`` equals the invalidated one (a fetch that began before the
/// invalidation).
public protocol ContentfulEntryStore: Sendable {
    /// The stored copies of `keys` (keys without a copy are absent), with their
    /// ``ContentfulStoredEntry/age`` and ``ContentfulStoredEntry/isInvalidated``.
    func entries(for keys: [ContentfulEntryStoreKey]) async -> [ContentfulEntryStoreKey: ContentfulStoredEntry]

    /// Writes `entries` back (each under its ``ContentfulStoredEntry/key``), under the revision
    /// guard of the type's contract.
    func save(_ entries: [ContentfulStoredEntry]) async

    /// Runs `fetch` holding the claim to fetch `key` from the CDA, so the replicas fetch one entry
    /// once at a time; waits for another replica's claim at most a bounded time (then runs `fetch`
    /// without the claim: a dead or stuck replica never blocks the others). `fetch` gets the copy
    /// stored when the claim was obtained (another replica may have just written it) and returns
    /// its result and the copy to write back (nil: nothing), which is saved before the claim is
    /// released.
    func withFetchClaim<Result: Sendable>(
        for key: ContentfulEntryStoreKey,
        _ fetch: (_ current: ContentfulStoredEntry?) async -> (result: Result, writeBack: ContentfulStoredEntry?)
    ) async -> Result

    /// Marks the stored copies that contain `invalidation`'s entry (as the item or in the
    /// includes), or all copies of the space and environment, as invalidated, and tells the other
    /// replicas when the store also carries invalidations.
    func invalidate(_ invalidation: ContentfulInvalidation) async
}

/// Which entry a ``ContentfulEntryStore`` copy is: space, environment, locale and entry id.
public struct ContentfulEntryStoreKey: Hashable, Sendable, CustomStringConvertible {
    /// The space id.
    public var spaceId: String
    /// The environment id.
    public var environment: String
    /// The locale the entry was fetched in; empty for the space's default locale.
    public var locale: String
    /// The entry's `sys.id`.
    public var entryId: String

    /// A key; each parameter sets the property of the same name.
    public init(spaceId: String, environment: String, locale: String, entryId: String) {
        self.spaceId = spaceId
        self.environment = environment
        self.locale = locale
        self.entryId = entryId
    }

    /// `space/environment/locale/entryId`.
    public var description: String { "\(spaceId)/\(environment)/\(locale)/\(entryId)" }
}

/// One entry as a ``ContentfulEntryStore`` keeps it: the prepared document's JSON text and what
/// the revision guard and the invalidations need.
public struct ContentfulStoredEntry: Sendable, Equatable {
    /// Which entry this is.
    public var key: ContentfulEntryStoreKey
    /// The item's `sys.revision` (0 when the item has none).
    public var revision: Int
    /// `type/id@revision` of the item and of every include, sorted and joined: changes whenever
    /// any of them changes.
    public var fingerprint: String
    /// Every entry and asset id the document contains (the item, its includes, unresolvable
    /// links): an invalidation of any of them invalidates the copy.
    public var referencedIds: [String]
    /// The document: a CDA collection of the one item and its includes, UTF-8 JSON text.
    public var jsonText: String
    /// How long ago the copy was fetched from the CDA, as the store measures it (zero in copies
    /// the source hands to the store).
    public var age: Duration
    /// True when an invalidation marked the copy after it was written: the source uses it only
    /// as a stale-if-error fallback.
    public var isInvalidated: Bool

    /// A stored copy; each parameter sets the property of the same name.
    public init(
        key: ContentfulEntryStoreKey, revision: Int, fingerprint: String, referencedIds: [String], jsonText: String,
        age: Duration = .zero, isInvalidated: Bool = false
    ) {
        self.key = key
        self.revision = revision
        self.fingerprint = fingerprint
        self.referencedIds = referencedIds
        self.jsonText = jsonText
        self.age = age
        self.isInvalidated = isInvalidated
    }

    /// The sum of every revision in ``fingerprint`` (the item's and each include's): it grows
    /// whenever any of them is republished, for a store's revision guard between copies of equal
    /// ``revision``. Never traps: the sum stops at `Int.max`, and a part without a decimal
    /// revision that fits an `Int`, or with a negative one, counts 0.
    public var revisionSum: Int {
        var sum = 0
        for part in fingerprint.split(separator: ",") {
            guard let at = part.lastIndex(of: "@"), let revision = Int(part[part.index(after: at)...]), revision > 0 else { continue }
            let (added, overflow) = sum.addingReportingOverflow(revision)
            if overflow { return Int.max }
            sum = added
        }
        return sum
    }
}

/// An invalidation of cached entries: one entry (and every document that includes it) or
/// everything, in one space and environment.
public struct ContentfulInvalidation: Sendable, Hashable, CustomStringConvertible {
    /// The space id.
    public var spaceId: String
    /// The environment id.
    public var environment: String
    /// The entry (or asset) id; nil: every entry of the space and environment.
    public var entryId: String?

    /// An invalidation; each parameter sets the property of the same name.
    public init(spaceId: String, environment: String, entryId: String?) {
        self.spaceId = spaceId
        self.environment = environment
        self.entryId = entryId
    }

    /// `space/environment/entryId` or `space/environment/*`.
    public var description: String { "\(spaceId)/\(environment)/\(entryId ?? "*")" }
}
