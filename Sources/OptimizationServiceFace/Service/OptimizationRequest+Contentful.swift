import Foundation
import OptimizationContent

extension OptimizationRequest {
    /// Fetches entry `id` from `source` (the shared cache first: content is the same for every
    /// visitor) and resolves it with this request's current selections, in one call. The
    /// rendered variant counts for ``renderCacheKey``.
    ///
    /// - Parameters:
    ///   - id: the entry's `sys.id`.
    ///   - source: where the entry is fetched from (its shared cache first).
    ///   - locale: the locale to fetch in; nil means the request's locale
    ///     (``RequestOptions/locale``), else the service's configured locale, else the source's.
    /// - Throws: only `ContentfulDeliveryError` (fetching); resolution itself never throws.
    public func fetchOptimizedEntry(
        id: String, from source: ContentfulDeliverySource, locale: String? = nil
    ) async throws(ContentfulDeliveryError) -> ResolvedOptimizedEntry {
        let requested = locale ?? options.locale ?? service.config.locale
        let entry = try await source.entry(id: id, locale: requested.map { $0.replacingOccurrences(of: "_", with: "-") })
        return resolveOptimizedEntry(baseline: entry)
    }
}
