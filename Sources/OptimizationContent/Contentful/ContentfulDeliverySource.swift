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
    let requester: ContentfulDeliveryRequester
    private let ownedTransport: HTTPFetchTransport?
    let clock: any HostClock
    let logger: Logger
    let flights = Mutex<[ContentfulEntryQuery: Task<Result<[ContentfulEntry], ContentfulDeliveryError>, Never>]>([:])
    let refreshes = Mutex<[ContentfulEntryQuery: Task<Void, Never>]>([:])
    /// The shared store fetches by id go through; nil without one and for the Preview API.
    let entryStore: (any ContentfulEntryStore)?
    /// The invalidations on their way to the entry store; nil without one.
    let storeInvalidations: ContentfulStoreInvalidationQueue?

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
}

