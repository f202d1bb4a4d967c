import Vapor

/// A misuse of the Vapor integration, reported where it happens; never a visitor's input.
/// An immutable `Sendable` value.
public enum OptimizationVaporError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `app.optimization.configure(…)` was called before for this application.
    case alreadyConfigured
    /// `app.optimization` is used (by ``OptimizationMiddleware`` or `service`) before
    /// `app.optimization.configure(…)`.
    case notConfigured
    /// `req.optimization` or `req.optimizationState` is read on a route that
    /// ``OptimizationMiddleware`` does not run for.
    case middlewareNotInstalled

    /// The misuse, in words.
    public var description: String {
        switch self {
        case .alreadyConfigured: "app.optimization is configured already: configure it once per application"
        case .notConfigured: "app.optimization is not configured: call app.optimization.configure(service:cookies:) first"
        case .middlewareNotInstalled: "OptimizationMiddleware is not installed for this route"
        }
    }
}

extension OptimizationVaporError: AbortError {
    /// Every misuse answers 500: the application, not the visitor, has to change.
    public var status: HTTPResponseStatus { .internalServerError }
    /// ``description``.
    public var reason: String { description }
}
