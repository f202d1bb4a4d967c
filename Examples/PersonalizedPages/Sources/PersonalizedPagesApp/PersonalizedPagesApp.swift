import Hummingbird
import Logging
import Optimization
import ServiceLifecycle
import UnixSignals

/// The personalized-pages service: one `OptimizationService` and one Hummingbird HTTP server,
/// run together in one `ServiceGroup`.
///
/// ``run(gracefulShutdownSignals:onListening:)`` starts the engines first (bounded), then serves
/// until a graceful-shutdown signal (SIGTERM/SIGINT by default) or cancellation. Graceful
/// shutdown runs in reverse order: the HTTP server stops accepting and finishes the requests in
/// flight, then the Optimization service refuses new events and flushes what was queued
/// (within ``AppConfiguration/shutdownFlushTimeout``).
///
/// Accepts a `Logger` and never creates one. Thread-safe (immutable).
public struct PersonalizedPagesApp: Sendable {
    public let configuration: AppConfiguration
    public let service: OptimizationService
    public let content: PageContent
    let logger: Logger

    /// Loads the page's entries and creates (does not start) the Optimization service.
    /// - Throws: ``PageContentError`` when the fixtures cannot be read.
    public init(configuration: AppConfiguration, logger: Logger) throws(PageContentError) {
        self.configuration = configuration
        self.logger = logger
        content = try PageContent.load(fixturesDirectory: configuration.fixturesDirectory)
        let api: OptimizationAPIConfig? =
            configuration.experienceBaseURL == nil && configuration.insightsBaseURL == nil
            ? nil
            : OptimizationAPIConfig(experienceBaseURL: configuration.experienceBaseURL, insightsBaseURL: configuration.insightsBaseURL)
        service = OptimizationService(
            config: OptimizationConfig(clientId: configuration.clientId, environment: configuration.environment, api: api),
            options: .init(
                engines: configuration.engines,
                experienceTimeout: configuration.experienceTimeout,
                shutdownFlushTimeout: configuration.shutdownFlushTimeout),
            environment: .init(logger: logger))
    }

    /// The Hummingbird application (routes of ``PageRoutes``); `onListening` gets the bound port.
    public func makeApplication(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router(context: BasicRequestContext.self)
        PageRoutes(service: service, content: content).register(on: router)
        return Application(
            router: router,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "personalized-pages"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Starts the engines, then returns the group running the service and the HTTP server
    /// (service first, so it shuts down last). Run it with `run()`; end it with
    /// `triggerGracefulShutdown()` or a signal.
    /// - Throws: ``OptimizationError`` when the engines cannot start within 30 s.
    public func makeServiceGroup(
        gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint],
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> ServiceGroup {
        try await service.start(timeout: .seconds(30))
        return ServiceGroup(configuration: .init(
            services: [.init(service: service), .init(service: makeApplication(onListening: onListening))],
            gracefulShutdownSignals: gracefulShutdownSignals,
            logger: logger))
    }

    /// Runs until a graceful-shutdown signal or cancellation (see the type's contract).
    public func run(
        gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint],
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        try await makeServiceGroup(gracefulShutdownSignals: gracefulShutdownSignals, onListening: onListening).run()
    }
}
