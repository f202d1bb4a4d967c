/// Where a ``ViewTrackingController`` sends its events.
///
/// Both calls are synchronous fire-and-forget: they return once the event is handed over and
/// never report delivery. Consent is **not** checked by the tracker; the receiver applies the
/// engine's consent gate (a blocked event is reported there, not here).
///
/// A controller calls these methods while holding its own lock, so the events of one controller
/// arrive in order, on the thread that fed it, the clock's thread (timer actions) or the thread
/// that released its last reference (the final update sent from `deinit`). Implementations must
/// therefore not call back into the calling controller.
///
/// `OptimizationClient` is the production sink (its `submitView(_:)` / `submitClick(_:)` route
/// through `trackView` / `trackClick`). Tests inject a recording sink.
package protocol ViewEventSink: Sendable {
    /// Hands an entry view (or a duration update / final update of one) to the engine.
    func submitView(_ payload: TrackViewPayload)
    /// Hands an entry click to the engine.
    func submitClick(_ payload: TrackClickPayload)
}
