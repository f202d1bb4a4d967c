import Optimization
import Vapor

extension Application {
    /// The application's Optimization integration: configure it once with
    /// ``Optimization/configure(service:cookies:startTimeout:requestOptions:)`` while configuring
    /// the application, then install ``OptimizationMiddleware`` and mount the routes.
    public var optimization: Optimization { Optimization(application: self) }

    /// The Optimization integration of one `Application`, kept in its storage. A view: create as
    /// many as you like (`app.optimization`), they read and write the same storage.
    ///
    /// **Threading.** `Sendable`; configure it while configuring the application, before it boots.
    /// Reading it from request handlers is safe (Vapor's storage is locked).
    public struct Optimization: Sendable {
        /// The application whose storage holds the configuration.
        public let application: Application

        /// What ``configure(service:cookies:startTimeout:requestOptions:)`` stored.
        public struct Configuration: Sendable {
            /// The service every request's `OptimizationRequest` comes from.
            public let service: OptimizationService
            /// Reads and writes the visitor's sealed state cookie.
            public let cookies: VisitorCookies
            /// Makes each request's options; nil uses `RequestOptions(_:visitorState:)`.
            public let requestOptions: OptimizationMiddleware.RequestOptionsProvider?
        }

        private struct ConfigurationKey: StorageKey {
            typealias Value = Configuration
        }

        /// The configuration, or nil before ``configure(service:cookies:startTimeout:requestOptions:)``.
        public var configuration: Configuration? {
            application.storage[ConfigurationKey.self]
        }

        /// The configured service.
        /// - Throws: ``OptimizationVaporError/notConfigured`` before
        ///   ``configure(service:cookies:startTimeout:requestOptions:)``.
        public var service: OptimizationService {
            get throws(OptimizationVaporError) {
                guard let configuration else { throw .notConfigured }
                return configuration.service
            }
        }

        /// Configures the integration, once per application: stores `service` and `cookies` in
        /// the application's storage and adds an ``OptimizationLifecycleHandler`` to its lifecycle,
        /// so the service's engines start when the application boots (`asyncBoot()`, which
        /// `execute()` and `startup()` run) and `asyncShutdown()` flushes the queued events and
        /// stops them.
        /// - Parameters:
        ///   - service: the process's one `OptimizationService`.
        ///   - cookies: reads and writes the visitor's sealed state cookie.
        ///   - startTimeout: the longest the engines may take to start; default 30 s.
        ///   - requestOptions: each request's options from the HTTP request and the visitor's
        ///     verified state; nil (the default) uses `RequestOptions(_:visitorState:)`.
        /// - Throws: ``OptimizationVaporError/alreadyConfigured`` on a second call: the service,
        ///   its lifecycle and the cookie keys are the application's, set once.
        public func configure(
            service: OptimizationService, cookies: VisitorCookies, startTimeout: Duration = .seconds(30),
            requestOptions: OptimizationMiddleware.RequestOptionsProvider? = nil
        ) throws(OptimizationVaporError) {
            guard configuration == nil else { throw .alreadyConfigured }
            application.storage[ConfigurationKey.self] = Configuration(service: service, cookies: cookies, requestOptions: requestOptions)
            application.lifecycle.use(OptimizationLifecycleHandler(service: service, startTimeout: startTimeout))
        }
    }
}
