import Logging
import OptimizationTransport

extension OptimizationAPIConfig {
    /// A new `HTTPFetchTransport` that may reach exactly these (or the default) Experience and
    /// Insights base URLs, with this request timeout (default 3 s). The caller shuts it down.
    /// - Throws: `OptimizationError/configError(_:)` for an unusable base URL.
    package func makeTransport(logger: Logger) throws(OptimizationError) -> HTTPFetchTransport {
        do {
            return try HTTPFetchTransport(
                configuration: .init(
                    allowedBaseURLs: [effectiveExperienceBaseURL, effectiveInsightsBaseURL],
                    requestTimeout: requestTimeout ?? .seconds(3)),
                logger: logger)
        } catch {
            throw .configError("\(error)")
        }
    }
}
