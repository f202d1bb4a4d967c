import OptimizationContent

// The client is where a ViewTrackingController sends its events (OptimizationClient+Events.swift
// declares the conformance) and whose clock runs its timers.
extension ViewTrackingController {
    /// A controller for an entry rendered from `resolved`.
    ///
    /// Metadata: `componentId` = `baseline.id`; `experienceId`, `variantIndex` (default 0) and
    /// `sticky` from `resolved.selectedOptimization`; `optimizationContextId` from `resolved`.
    /// Events go through `client` and timers run on `client.environment.clock`.
    /// - Parameters:
    ///   - client: the client that receives the events and whose clock runs the timers.
    ///   - baseline: the entry that was passed to `resolveOptimizedEntry` (views are always
    ///     reported against the baseline, also when a variant or the empty variant is rendered).
    ///   - resolved: what `resolveOptimizedEntry` returned for it.
    ///   - options: visible ratio, dwell time and update interval (`ViewTrackingOptions`);
    ///     default `ViewTrackingOptions()`.
    /// - Throws: `ViewTrackingError/invalidOption(_:value:)` for invalid `options`.
    public convenience init(
        client: OptimizationClient, baseline: ContentfulEntry, resolved: ResolvedOptimizedEntry,
        options: ViewTrackingOptions = .init()
    ) throws(ViewTrackingError) {
        try self.init(client: client, baselineId: baseline.id, resolved: resolved, options: options)
    }

    /// Like ``init(client:baseline:resolved:options:)``, for a host that only kept the
    /// baseline's `sys.id`.
    /// - Throws: `ViewTrackingError/emptyComponentId` when `baselineId` is empty,
    ///   `ViewTrackingError/invalidOption(_:value:)` for invalid `options`.
    public convenience init(
        client: OptimizationClient, baselineId: String, resolved: ResolvedOptimizedEntry,
        options: ViewTrackingOptions = .init()
    ) throws(ViewTrackingError) {
        try self.init(sink: client, clock: client.environment.clock, baselineId: baselineId, resolved: resolved, options: options)
    }

    /// A controller with explicit metadata. Events go through `client` and timers run on
    /// `client.environment.clock`.
    /// - Parameters:
    ///   - client: the client that receives the events and whose clock runs the timers.
    ///   - componentId: `sys.id` of the baseline entry.
    ///   - experienceId: the matched experience, if any.
    ///   - variantIndex: the rendered variant, 0 for the baseline.
    ///   - sticky: whether the experience is sticky, if known.
    ///   - optimizationContextId: from the `ResolvedOptimizedEntry`, if any.
    ///   - options: visible ratio, dwell time and update interval (`ViewTrackingOptions`);
    ///     default `ViewTrackingOptions()`.
    /// - Throws: `ViewTrackingError/emptyComponentId` when `componentId` is empty,
    ///   `ViewTrackingError/invalidOption(_:value:)` for invalid `options`.
    public convenience init(
        client: OptimizationClient, componentId: String, experienceId: String? = nil, variantIndex: Int = 0,
        sticky: Bool? = nil, optimizationContextId: String? = nil, options: ViewTrackingOptions = .init()
    ) throws(ViewTrackingError) {
        try self.init(
            sink: client, clock: client.environment.clock, componentId: componentId, experienceId: experienceId,
            variantIndex: variantIndex, sticky: sticky, optimizationContextId: optimizationContextId, options: options)
    }

}
