import CoreMetrics
import Hummingbird
import JavaScriptHost
import Logging
import Optimization
import OptimizationHummingbird
import OptimizationPostgres
import Prometheus
import ServiceLifecycle
import UnixSignals

/// The personalized-pages service: one `OptimizationService`, the public Hummingbird HTTP server
/// and, with ``AppConfiguration/metricsPort``, a second listener for `GET /metrics`, run together
/// in one `ServiceGroup`.
///
/// ``run(gracefulShutdownSignals:onListening:onMetricsListening:)`` starts the engines first (bounded), then serves
/// until a graceful-shutdown signal (SIGTERM/SIGINT by default) or cancellation. Graceful
/// shutdown runs in reverse order: the HTTP server stops accepting and finishes the requests in
/// flight, then the Optimization service refuses new events and flushes what was queued
/// (within ``AppConfiguration/shutdownFlushTimeout``).
///
/// With ``AppConfiguration/postgresURL`` the replicas share one PostgreSQL database: the service
/// stores accepted Insights events in its shared outbox (`PostgresOutboxStore`), so a replica that
/// dies for good leaves them to the others. With ``AppConfiguration/contentful`` it also serves
/// live entries (``ContentRoutes``), through that database when there is one (``ContentBackend``).
/// With a metrics registry the Optimization service and the PostgreSQL integration record into
/// it, and with ``AppConfiguration/metricsPort`` too the metrics listener serves it at
/// `GET /metrics` (``MetricsRoute``); the public listener never serves `/metrics`.
///
/// Both listeners close a connection that makes no progress for
/// ``AppConfiguration/idleTimeout`` (half a request, or idle keep-alive: see there).
///
/// Every `GET` route of either listener answers `HEAD` as well: the same status and headers
/// (`Content-Length` of the `GET` body included), no body.
///
/// Accepts a `Logger` and never creates one. Thread-safe (immutable).
public struct PersonalizedPagesApp: Sendable {
    public let configuration: AppConfiguration
    public let service: OptimizationService
    public let content: PageContent
    /// Where `GET /metrics` of the metrics listener reads from; nil: no metrics listener.
    public let metricsRegistry: PrometheusCollectorRegistry?
    /// Telemetry export run first in the service group (so it stops last); nil: none.
    public let telemetry: AppTelemetry?
    /// The database shared by the replicas (``AppConfiguration/postgresURL``); started by
    /// ``makeServiceGroup(gracefulShutdownSignals:onListening:onMetricsListening:)`` before the service.
    let database: OptimizationDatabase?
    /// Reads and writes the sealed visitor-state cookie, `pp_state`.
    let visitorCookies: VisitorCookies
    /// Seals, opens and records `/first` pages' replay tickets.
    let replayTickets: OptimizationReplayTickets
    /// How `POST /webhooks/contentful` is authenticated (from ``ContentfulSettings/webhook``);
    /// nil: not mounted.
    let contentfulWebhook: ContentfulWebhookAuthentication?
    /// Answers the OFREP routes; nil without ``AppConfiguration/ofrepCredentials`` (not mounted).
    let ofrep: OFREPEvaluator?
    /// Seals the OFREP targeting tokens of the app's visitors
    /// (`OFREPTargetingToken.seal(profileId:with:)`), valid for a day; the OFREP routes accept
    /// them as `targetingKey` unless ``AppConfiguration/ofrepTrustsProfileIds`` is set.
    public let ofrepTargetingTokens: SignedValueCodec
    /// The service's transport, which records the exchanges `GET /floor` repeats (``FloorRoute``).
    let floorExchange: FloorExchange
    /// The HTTP client of the service and of `GET /floor`; shut down after the service.
    let httpTransport: HTTPFetchTransport
    let logger: Logger

    /// Loads the page's entries and creates (does not start) the Optimization service.
    /// - Parameters:
    ///   - metricsRegistry: the Prometheus registry the service's metrics go to and the metrics
    ///     listener serves (when ``AppConfiguration/metricsPort`` is set); nil: no metrics
    ///     listener, the service records into `MetricsSystem.factory`.
    ///   - telemetry: exporters run in the app's service group, first, so they flush after the
    ///     Optimization service (``AppTelemetry``); its metrics factory, when there is one, gets
    ///     every metric the registry gets. Nil: no export.
    ///   - clock: the time of visitor-state and replay-ticket expiry, of the single-use replay
    ///     record and of the Optimization service's timers (flush intervals, backoff, budgets,
    ///     the shutdown flush's bound); default wall-clock time.
    /// - Throws: ``PageContentError`` when the fixtures cannot be read; `PostgresIntegrationError`
    ///   when ``AppConfiguration/postgresURL`` is not a valid connection string;
    ///   `VisitorStateKeyError` when a ``AppConfiguration/visitorStateKeys`` entry is not base64
    ///   of at least 32 bytes; `ContentfulWebhookError.invalidSecret` when the webhook signing
    ///   secret is not 64 characters; `OFREPConfigurationError` for an empty OFREP credential.
    /// The visitor-state cookie's name.
    public static let stateCookieName = "pp_state"

    public init(
        configuration: AppConfiguration, metricsRegistry: PrometheusCollectorRegistry? = nil, telemetry: AppTelemetry? = nil,
        clock: any HostClock = SystemClock(), logger: Logger
    ) throws {
        self.configuration = configuration
        self.metricsRegistry = metricsRegistry
        self.telemetry = telemetry
        self.logger = logger
        switch configuration.contentful?.webhook {
        case nil: contentfulWebhook = nil
        case .signed(let secret): contentfulWebhook = try .signed(secret: secret)
        case .unsigned: contentfulWebhook = .insecureUnsigned
        }
        if configuration.contentful != nil, configuration.contentful?.webhook == nil {
            logger.notice("no webhook signing secret: POST /webhooks/contentful is not mounted (set CONTENTFUL_WEBHOOK_SECRET or --contentful-webhook-secret-file)")
        }
        content = try PageContent.load(fixturesDirectory: configuration.fixturesDirectory)
        let metricsFactory: (any MetricsFactory)? = switch (metricsRegistry.map { PrometheusMetricsFactory(registry: $0) }, telemetry?.metricsFactory) {
        case (let prometheus?, let exported?): MultiplexMetricsHandler(factories: [prometheus, exported])
        case (let prometheus?, nil): prometheus
        case (nil, let exported): exported
        }
        let keys: VisitorStateKeys
        if configuration.visitorStateKeys.isEmpty {
            keys = .random()
            logger.notice("no visitor-state key configured: a random key signs visitor state, which will not survive a restart or be shared with other replicas (set PP_VISITOR_STATE_KEYS or --visitor-state-key-file)")
        } else {
            keys = try VisitorStateKeys(base64Encoded: configuration.visitorStateKeys)
        }
        // Declines this process took: an older copy of a visitor's cookie cannot bring consent back.
        visitorCookies = VisitorCookies(
            codec: VisitorStateCodec(keys: keys, lifetime: .seconds(VisitorCookies.maxAge), clock: clock, metricsFactory: metricsFactory),
            secure: configuration.secureCookies, name: Self.stateCookieName,
            withdrawals: ConsentWithdrawals(retention: .seconds(VisitorCookies.maxAge), clock: clock))
        let ticketCodec = SignedValueCodec(
            keys: keys, purpose: ReplayTicket.purpose, lifetime: configuration.replayTicketLifetime, clock: clock, metricsFactory: metricsFactory)
        database = try configuration.postgresURL.map {
            OptimizationDatabase(configuration: try PostgresConfiguration(connectionString: $0), metricsFactory: metricsFactory, logger: logger)
        }
        // With the database, every replica shares one record of committed tickets; without it,
        // tickets are bound to this process (another replica or a restart refuses them).
        let ledger: any ReplayLedger = database.map { PostgresReplayLedger(database: $0, retention: ticketCodec.lifetime) }
            ?? InMemoryReplayLedger(retention: ticketCodec.lifetime, capacity: 100_000, clock: clock)
        // At most 30 tickets a minute per connection address: a client fetching ticket after
        // ticket cannot fill the record of committed tickets for everyone.
        replayTickets = OptimizationReplayTickets(codec: ticketCodec, ledger: ledger, issuanceLimit: ReplayIssuanceLimit(clock: clock))
        let api: OptimizationAPIConfig? =
            configuration.experienceBaseURL == nil && configuration.insightsBaseURL == nil
            ? nil
            : OptimizationAPIConfig(experienceBaseURL: configuration.experienceBaseURL, insightsBaseURL: configuration.insightsBaseURL)
        let optimizationConfig = OptimizationConfig(
            clientId: configuration.clientId, environment: configuration.environment,
            allowedEventTypes: configuration.strictConsent ? [] : nil, api: api)
        let apiConfig = api ?? OptimizationAPIConfig()
        httpTransport = try HTTPFetchTransport(
            configuration: .init(
                allowedBaseURLs: [apiConfig.effectiveExperienceBaseURL, apiConfig.effectiveInsightsBaseURL],
                requestTimeout: apiConfig.requestTimeout ?? .seconds(3)),
            logger: logger)
        floorExchange = FloorExchange(
            transport: httpTransport,
            insightsURL: InsightsEndpoint.eventsURL(
                baseURL: apiConfig.effectiveInsightsBaseURL, apiVersion: optimizationConfig.apiVersion.rawValue,
                tenantId: optimizationConfig.clientId, environment: optimizationConfig.environment ?? ""))
        service = OptimizationService(
            config: optimizationConfig,
            options: .init(
                engines: configuration.engines,
                experienceTimeout: configuration.experienceTimeout,
                shutdownFlushTimeout: configuration.shutdownFlushTimeout,
                sharedOutbox: database.map {
                    SharedOutbox(
                        store: PostgresOutboxStore(database: $0, configuration: .init(leaseDuration: configuration.sharedOutboxLease)),
                        leaseRenewalInterval: configuration.sharedOutboxLease / 3)
                }),
            environment: .init(logger: logger, clock: clock, transport: floorExchange, metricsFactory: metricsFactory))
        ofrepTargetingTokens = SignedValueCodec(
            keys: keys, purpose: OFREPTargetingToken.purpose, lifetime: .seconds(86_400), clock: clock, metricsFactory: metricsFactory)
        ofrep = configuration.ofrepCredentials.isEmpty
            ? nil
            : try OFREPEvaluator(
                service: service,
                configuration: OFREPConfiguration(
                    credentials: configuration.ofrepCredentials,
                    targetingKeys: configuration.ofrepTrustsProfileIds ? .profileIds : .sealedTokens(ofrepTargetingTokens)),
                metricsFactory: metricsFactory)
    }

    /// The public Hummingbird application (routes of ``PageRoutes``, `HEAD` for each `GET`);
    /// `onListening` gets the bound port.
    public func makeApplication(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        makeApplication(backend: nil, onListening: onListening)
    }

    /// The public application with the live-content routes of `backend` when there is one; it
    /// runs the Optimization service beside its server (`addOptimizationService`: started before
    /// the server listens, flushed after it stops). With ``telemetry``, `ServerSpanMiddleware`
    /// gives every request a server span that carries no visitor data.
    func makeApplication(backend: ContentBackend?, onListening: @escaping @Sendable (Int) async -> Void) -> some ApplicationProtocol {
        let router = Router(context: BasicOptimizationRequestContext.self, options: .autoGenerateHeadEndpoints)
        // With telemetry, a server span per request (named by its route, continuing a caller's
        // W3C `traceparent`; method, route and status only): the library's `optimization.request`
        // spans and flag-evaluation events of the request go under it.
        if telemetry != nil { router.add(middleware: ServerSpanMiddleware()) }
        router.add(middleware: OptimizationMiddleware(service: service, cookies: visitorCookies))
        let pages = PageRoutes(service: service, content: content, tickets: replayTickets)
        pages.register(on: router)
        FloorRoute(exchange: floorExchange, content: content, strictConsent: pages.strictConsent).register(on: router)
        if let backend { ContentRoutes(source: backend.source, webhook: contentfulWebhook).register(on: router) }
        if let ofrep { router.addOFREPRoutes(ofrep) }
        var application = Application(
            router: router,
            server: Self.server(idleTimeout: configuration.idleTimeout),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "personalized-pages"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        application.addOptimizationService(service)
        return application
    }

    /// The metrics listener: `GET /metrics` (and `HEAD`) of ``metricsRegistry`` on
    /// ``AppConfiguration/metricsHost``:``AppConfiguration/metricsPort``, nothing else; nil without
    /// a registry or a metrics port. `onListening` gets the bound port.
    public func makeMetricsApplication(
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> Application<RouterResponder<BasicRequestContext>>? {
        guard let metricsRegistry, let port = configuration.metricsPort else { return nil }
        let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
        MetricsRoute(registry: metricsRegistry).register(on: router)
        return Application(
            router: router,
            server: Self.server(idleTimeout: configuration.idleTimeout),
            configuration: .init(address: .hostname(configuration.metricsHost, port: port), serverName: "personalized-pages-metrics"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Starts the database (schema migration), the engines and the live-content backend (entry
    /// store, invalidation bus), then returns the group running the ``telemetry`` exporters, the
    /// database, the backend, the metrics listener and the public application, which runs the
    /// service beside its HTTP server (in that order, so they shut down in reverse: the server,
    /// then the service, which gives its claimed events back to the shared outbox before the
    /// database closes, and the exporters last, flushing the spans of the service's final flush). Run it with `run()`; end it with `triggerGracefulShutdown()` or a signal.
    /// `onListening` gets the public port, `onMetricsListening` the metrics listener's.
    /// - Throws: ``OptimizationError`` when the engines cannot start within 30 s; a
    ///   `PostgresIntegrationError` or `ContentfulDeliveryError` when the database or the backend
    ///   cannot start.
    public func makeServiceGroup(
        gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint],
        onListening: @escaping @Sendable (Int) async -> Void = { _ in },
        onMetricsListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> ServiceGroup {
        try await database?.start()
        do {
            try await service.start(timeout: .seconds(30))
        } catch {
            await database?.shutdown()
            throw error
        }
        var backend: ContentBackend?
        if let contentful = configuration.contentful {
            do {
                backend = try await ContentBackend.start(contentful: contentful, database: database, logger: logger)
            } catch {
                await service.shutdown()
                await database?.shutdown()
                throw error
            }
        }
        // Telemetry first, so it is told to stop last: the spans and metrics of the service's
        // final flush are exported before the exporters stop.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = telemetry.map { [.init(service: $0.service)] } ?? []
        services.append(.init(service: TransportLifetime(transport: httpTransport)))
        if let database { services.append(.init(service: DatabaseLifetime(database: database))) }
        if let backend { services.append(.init(service: backend)) }
        if let metrics = makeMetricsApplication(onListening: onMetricsListening) { services.append(.init(service: metrics)) }
        services.append(.init(service: makeApplication(backend: backend, onListening: onListening)))
        return ServiceGroup(configuration: .init(
            services: services,
            gracefulShutdownSignals: gracefulShutdownSignals,
            logger: logger))
    }

    /// Runs until a graceful-shutdown signal or cancellation (see the type's contract).
    public func run(
        gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint],
        onListening: @escaping @Sendable (Int) async -> Void = { _ in },
        onMetricsListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        try await makeServiceGroup(
            gracefulShutdownSignals: gracefulShutdownSignals, onListening: onListening, onMetricsListening: onMetricsListening
        ).run()
    }
}
