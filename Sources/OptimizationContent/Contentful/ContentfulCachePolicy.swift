import OptimizationJSON
import OptimizationTransport
/// How a ``ContentfulDeliverySource`` keeps fetched entries. Times run on the source's clock;
/// sizes are counts and bytes of the entries' JSON text.
public struct ContentfulCachePolicy: Sendable, Equatable {
    /// Most cached queries. Default 1000. Least recently used ones are evicted first.
    public var maximumEntries: Int
    /// Most bytes of entry JSON kept. Default 64 MiB. An entry larger than this is served but not kept.
    public var maximumBytes: Int
    /// How long a fetched entry is fresh (served without asking the CDA). Default 60 s. Zero disables
    /// the cache (every fetch asks; concurrent identical fetches still share one request).
    public var timeToLive: Duration
    /// After expiry, how long the old copy is still served at once while one background request
    /// refreshes it (stale-while-revalidate). Default 30 s.
    public var staleWhileRevalidate: Duration
    /// After expiry, how long the old copy is served when the CDA fails transiently (5xx, 429,
    /// unreachable, deadline: stale-if-error). Default 10 min. 401/403/404/400 are never masked.
    public var staleIfError: Duration
    /// How long an entry id the CDA answered it does not have (unknown, or not published) is
    /// answered as missing without asking again: a negative cache, so a client asking the same
    /// unknown id in a loop costs one CDA request per id and period, not one per call. Default
    /// 30 s. An invalidation of the id (``ContentfulDeliverySource/invalidate(entryId:)``, e.g.
    /// from a publish webhook) forgets it at once. Zero disables the negative cache.
    public var notFoundTimeToLive: Duration
    /// Most ids (per locale) remembered as missing. Default 10,000; beyond it the oldest are
    /// forgotten in bulk (they are then asked again). Zero disables the negative cache.
    public var maximumNotFoundIds: Int

    /// A policy; each parameter sets the property of the same name (defaults as documented there).
    public init(
        maximumEntries: Int = 1000,
        maximumBytes: Int = 64 << 20,
        timeToLive: Duration = .seconds(60),
        staleWhileRevalidate: Duration = .seconds(30),
        staleIfError: Duration = .seconds(600),
        notFoundTimeToLive: Duration = .seconds(30),
        maximumNotFoundIds: Int = 10_000
    ) {
        self.maximumEntries = maximumEntries
        self.maximumBytes = maximumBytes
        self.timeToLive = timeToLive
        self.staleWhileRevalidate = staleWhileRevalidate
        self.staleIfError = staleIfError
        self.notFoundTimeToLive = notFoundTimeToLive
        self.maximumNotFoundIds = maximumNotFoundIds
    }

    /// Nothing kept: every fetch goes to the CDA.
    public static let disabled = ContentfulCachePolicy(
        maximumEntries: 0, maximumBytes: 0, timeToLive: .zero, staleWhileRevalidate: .zero, staleIfError: .zero,
        notFoundTimeToLive: .zero, maximumNotFoundIds: 0)
}
