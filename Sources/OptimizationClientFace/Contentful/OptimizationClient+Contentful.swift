import OptimizationContent

extension OptimizationClient {
    /// Fetches entry `id` from `source` (its cache first) and resolves it for this client's
    /// visitor, in one call.
    ///
    /// - Parameters:
    ///   - id: the entry's `sys.id`.
    ///   - source: where the entry is fetched from (its cache first).
    ///   - selectedOptimizations: nil means the client's CURRENT selections (as for
    ///     `resolveOptimizedEntry(baseline:selectedOptimizations:)`).
    ///   - locale: the locale to fetch in; nil means the client's current locale (from its
    ///     configuration), else the source's configured one.
    /// - Returns: the baseline or variant to render (the baseline when the engine is not
    ///   initialized).
    /// - Throws: only `ContentfulDeliveryError` (fetching); resolution itself never throws.
    public func fetchOptimizedEntry(
        id: String, from source: ContentfulDeliverySource,
        selectedOptimizations: SelectedOptimizations? = nil, locale: String? = nil
    ) async throws(ContentfulDeliveryError) -> ResolvedOptimizedEntry {
        let entry = try await source.entry(id: id, locale: locale ?? (isInitialized ? state.locale : nil))
        return resolveOptimizedEntry(baseline: entry, selectedOptimizations: selectedOptimizations)
    }
}
