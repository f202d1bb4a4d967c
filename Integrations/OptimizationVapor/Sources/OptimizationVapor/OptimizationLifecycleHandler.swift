import Optimization
import Vapor

/// Starts an `OptimizationService` when the application boots and shuts it down, flushing its
/// queued events, when the application shuts down. `app.optimization.configure(…)` adds one;
/// add one yourself only for a service you do not configure there.
///
/// - **Boot** (`asyncBoot()`, run by `execute()` and `startup()`; call it yourself before testing
///   in memory): the engines start within ``startTimeout`` unless the service is running already.
///   When they cannot start, the boot throws that `OptimizationError` and the server never listens.
/// - **Shutdown** (`asyncShutdown()`, after the server stopped): the service refuses new events,
///   flushes what is queued (within `OptimizationService.Options.shutdownFlushTimeout`) and shuts
///   its engines down. The blocking `shutdown()` does not flush: shut down with
///   `asyncShutdown()`.
///
/// **Threading.** An immutable `Sendable` value; Vapor calls it from its boot and shutdown tasks.
public struct OptimizationLifecycleHandler: LifecycleHandler {
    /// The service started and stopped with the application.
    public let service: OptimizationService
    /// The longest the engines may take to start.
    public let startTimeout: Duration

    /// - Parameters:
    ///   - service: the service started and stopped with the application.
    ///   - startTimeout: the longest the engines may take to start; default 30 s.
    public init(service: OptimizationService, startTimeout: Duration = .seconds(30)) {
        self.service = service
        self.startTimeout = startTimeout
    }

    /// Starts the service's engines unless they are running.
    /// - Throws: the `OptimizationError` of a start that failed or timed out.
    public func willBootAsync(_ application: Application) async throws {
        guard !service.isRunning else { return }
        try await service.start(timeout: startTimeout)
        application.logger.debug("OptimizationService started")
    }

    /// Refuses new events, flushes the queued ones and shuts the engines down.
    public func shutdownAsync(_ application: Application) async {
        await service.shutdown()
        application.logger.debug("OptimizationService shut down")
    }
}
