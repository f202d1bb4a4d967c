import Foundation
import HostPlatform
import OptimizationJSON
import Synchronization

/// Turns the visibility of one rendered entry into view events: a view event after
/// `dwellTime` of continuous visibility, a duration update every
/// `viewDurationUpdateInterval` while the entry stays visible, and a final update when it
/// leaves view. Create one controller per rendered entry and feed it from the render loop.
///
/// ```swift
/// let tracker = try ViewTrackingController(client: client, baseline: baseline, resolved: resolved)
/// // every frame (or whenever the layout changes):
/// tracker.updateVisibility(ratio: visibleArea / totalArea)
/// // app goes to the background / comes back:
/// tracker.pause(); tracker.resume()
/// // entry removed from the screen (sends the final update if the view was sent):
/// tracker.stop()
/// ```
///
/// **Cycles.** The entry is *visible* when the last reported ratio is at least
/// ``ViewTrackingOptions/minVisibleRatio`` (inclusive) and the controller is neither paused nor
/// stopped. Becoming visible starts a cycle with a fresh ``currentViewId``. After `dwellTime`
/// in the cycle, one view event is sent with `viewDurationMs` = the time visible so far; then
/// one update at `dwellTime + k × viewDurationUpdateInterval` (k = 1, 2, …) with the
/// accumulated duration. Becoming not visible (ratio below the threshold, ``setVisible(_:)``
/// false, ``pause()``, ``stop()``, releasing the last reference) ends the cycle: if the view
/// event was sent, a final update carries the total duration; otherwise nothing is sent and the
/// partial dwell is discarded. Nothing carries over between cycles. All events of a cycle share
/// its `viewId`; ``stickyTrackingKey`` is the same for the controller's whole life.
///
/// **Time.** Every duration is a difference of the client's clock `now()` (milliseconds,
/// truncated to an integer), and the only timer is one pending `HostTimer` of that clock per
/// controller (none while not visible): no threads, no polling. With a `ManualClock`, events
/// fire synchronously inside `advance(by:)`. A late timer (a busy queue) does not change the
/// outcome: a view that fell due before the cycle ended is still sent, followed by the final
/// update; updates missed by a late timer are skipped, not sent in a burst.
///
/// **Delivery and consent.** Events go to the client as `trackView` / `trackClick` events,
/// fire-and-forget. The controller never checks consent: the engine's consent gate blocks (and
/// reports) what is not allowed.
///
/// **Threading.** Every method is safe from any thread; state is guarded by a lock (no actor, no
/// main-actor requirement). Events are handed to the client while that lock is held, so the
/// events of one controller are submitted in order. Timer actions run on the clock's thread.
///
/// **Lifecycle.** ``stop()`` ends a running cycle exactly like becoming not visible: if the
/// cycle's view event was sent, the final update with the total visible duration is sent, once;
/// before the dwell nothing is sent. Then the timer is cancelled and no event of any kind is sent
/// afterwards; a second ``stop()`` sends nothing. Releasing the last reference without calling
/// ``stop()`` does the same, on the releasing thread (the entry went away, so its final update
/// is due). That is safe in `deinit`: no other reference exists (timer actions hold the
/// controller weakly and do nothing once it is gone), and the sink, which never calls back into
/// the controller, gets the update before the controller's storage goes away. A cycle that
/// already ended (not visible, paused, stopped) sends nothing more.
public final class ViewTrackingController: Sendable {
    /// `sys.id` of the baseline entry (also when a variant is rendered).
    public let componentId: String
    /// The matched experience, if any.
    public let experienceId: String?
    /// The rendered variant: 0 for the baseline.
    public let variantIndex: Int
    /// Whether the matched experience is sticky; nil when unknown.
    public let sticky: Bool?
    /// Identifies the resolution this entry was rendered from, if any.
    public let optimizationContextId: String?
    /// One UUID per controller, sent with every view event (de-duplicates sticky views).
    public let stickyTrackingKey: String
    /// The validated timing options.
    public let options: ViewTrackingOptions

    private let sink: any ViewEventSink
    private let clock: any HostClock
    private let state = Mutex(State())

    private struct State {
        /// Last ratio reported by the host (sanitized to 0…1).
        var lastRatio = 0.0
        var isPaused = false
        var isStopped = false
        var cycle: Cycle?
        /// The one pending timer, if any.
        var timer: (any HostTimer)?
        /// Identifies the current timer: a fired action with another value is stale and ignored
        /// (a cancel can race with an action that has already started on another thread).
        var timerGeneration: UInt64 = 0
    }

    private struct Cycle {
        let viewId: String
        /// Clock time the cycle started, in ms.
        let startedAt: Double
        /// View event plus duration updates sent so far.
        var eventsSent = 0
    }

    // MARK: - Initializers

    /// A controller whose events go to `sink` and whose timers run on `clock`, with metadata
    /// derived from `resolved` (as `OptimizationClient`'s initializers do).
    package convenience init(
        sink: any ViewEventSink, clock: any HostClock, baselineId: String, resolved: ResolvedOptimizedEntry,
        options: ViewTrackingOptions = .init()
    ) throws(ViewTrackingError) {
        let selection = resolved.selectedOptimization
        try self.init(
            sink: sink, clock: clock, componentId: baselineId,
            experienceId: selection?["experienceId"]?.stringValue,
            variantIndex: selection?["variantIndex"]?.intValue ?? 0,
            sticky: selection?["sticky"]?.boolValue,
            optimizationContextId: resolved.optimizationContextId, options: options)
    }

    /// A controller whose events go to `sink` and whose timers run on `clock`.
    package init(
        sink: any ViewEventSink, clock: any HostClock, componentId: String, experienceId: String? = nil,
        variantIndex: Int = 0, sticky: Bool? = nil, optimizationContextId: String? = nil,
        options: ViewTrackingOptions = .init()
    ) throws(ViewTrackingError) {
        try options.validate()
        guard !componentId.isEmpty else { throw .emptyComponentId }
        self.sink = sink
        self.clock = clock
        self.componentId = componentId
        self.experienceId = experienceId
        self.variantIndex = variantIndex
        self.sticky = sticky
        self.optimizationContextId = optimizationContextId
        self.options = options
        self.stickyTrackingKey = UUID().uuidString
    }

    /// Ends a running cycle like ``stop()`` (its final update is sent if the view was).
    deinit {
        state.withLock { finish(&$0) }
    }

    // MARK: - State

    /// Whether the entry currently counts as visible (a cycle is running).
    public var isVisible: Bool {
        state.withLock { $0.cycle != nil }
    }

    /// `viewId` of the running cycle; nil while not visible.
    public var currentViewId: String? {
        state.withLock { $0.cycle?.viewId }
    }

    /// Whether ``pause()`` was called without a ``resume()`` since.
    public var isPaused: Bool {
        state.withLock { $0.isPaused }
    }

    /// Whether ``stop()`` was called.
    public var isStopped: Bool {
        state.withLock { $0.isStopped }
    }

    // MARK: - Feeding

    /// Reports the visible fraction of the entry.
    ///
    /// `ratio` is clamped to 0…1; NaN counts as 0. A ratio ≥ ``ViewTrackingOptions/minVisibleRatio``
    /// counts as visible. Only a change between visible and not visible has an effect: repeated
    /// visible reports (also lower ones that stay at or above the threshold) keep the running
    /// cycle and its dwell; dropping below ends the cycle. While paused, the ratio is only
    /// remembered for ``resume()``. Ignored after ``stop()``.
    public func updateVisibility(ratio: Double) {
        let ratio = ratio.isNaN ? 0 : min(1, max(0, ratio))
        state.withLock { state in
            guard !state.isStopped else { return }
            state.lastRatio = ratio
            guard !state.isPaused else { return }
            let eligible = ratio >= options.minVisibleRatio
            if eligible, state.cycle == nil {
                startCycle(&state)
            } else if !eligible, state.cycle != nil {
                endCycle(&state)
            }
        }
    }

    /// Reports the entry fully visible (ratio 1) or not visible at all (ratio 0).
    public func setVisible(_ visible: Bool) {
        updateVisibility(ratio: visible ? 1 : 0)
    }

    /// The host went to the background (or stops rendering for a while): ends a running cycle,
    /// with a final update if its view event was sent. Visibility reports are remembered but
    /// start no cycle until ``resume()``. A second call does nothing.
    public func pause() {
        state.withLock { state in
            guard !state.isStopped, !state.isPaused else { return }
            state.isPaused = true
            if state.cycle != nil { endCycle(&state) }
        }
    }

    /// Undoes ``pause()``: if the last reported ratio is still at or above the threshold, a new
    /// cycle starts (new `viewId`, full dwell). Does nothing when not paused or after ``stop()``.
    public func resume() {
        state.withLock { state in
            guard !state.isStopped, state.isPaused else { return }
            state.isPaused = false
            if state.lastRatio >= options.minVisibleRatio { startCycle(&state) }
        }
    }

    /// Ends the controller for good. A running cycle ends as when the entry leaves view: if its
    /// view event was sent, the final update with the total visible duration is sent; before the
    /// dwell nothing is sent. Then the pending timer is cancelled, no event of any kind is sent
    /// afterwards and every other call becomes a no-op. Idempotent: a second call sends nothing.
    public func stop() {
        state.withLock { finish(&$0) }
    }

    /// Sends a click on the entry (`trackClick`) with the controller's metadata. Independent of
    /// visibility and pausing; does nothing after ``stop()``.
    public func trackClick() {
        state.withLock { state in
            guard !state.isStopped else { return }
            sink.submitClick(TrackClickPayload(
                componentId: componentId, experienceId: experienceId,
                optimizationContextId: optimizationContextId, variantIndex: variantIndex))
        }
    }

    // MARK: - State machine (all under the lock)

    /// ``stop()`` and `deinit`: ends a running cycle (final update if its view was sent), then
    /// stops for good. Does nothing the second time.
    private func finish(_ state: inout State) {
        guard !state.isStopped else { return }
        state.isStopped = true
        endCycle(&state) // also cancels the pending timer, with or without a cycle
    }

    private func startCycle(_ state: inout State) {
        state.cycle = Cycle(viewId: UUID().uuidString, startedAt: clock.now())
        schedule(&state, after: options.dwellTime.inMilliseconds)
    }

    /// Ends the running cycle. A view event that fell due but whose timer has not run yet
    /// (a busy timer queue) is sent first, so the outcome does not depend on timer latency.
    private func endCycle(_ state: inout State) {
        cancelTimer(&state)
        guard let cycle = state.cycle else { return }
        state.cycle = nil
        let elapsed = max(0, clock.now() - cycle.startedAt)
        if cycle.eventsSent == 0, elapsed >= options.dwellTime.inMilliseconds {
            emitView(cycle, elapsed)
            emitView(cycle, elapsed)
        } else if cycle.eventsSent > 0 {
            emitView(cycle, elapsed)
        }
    }

    private func timerFired(generation: UInt64) {
        state.withLock { state in
            guard !state.isStopped, generation == state.timerGeneration, var cycle = state.cycle else { return }
            state.timer = nil
            let elapsed = max(0, clock.now() - cycle.startedAt)
            let due = nextDue(cycle)
            // Early by a clock's rounding: wait for the rest (not for sub-millisecond remainders,
            // which a clock may be unable to represent at epoch magnitudes).
            if due - elapsed >= 1 {
                schedule(&state, after: due - elapsed)
                return
            }
            emitView(cycle, elapsed)
            // Updates missed by a late timer are skipped, not sent in a burst.
            let intervalsPast = ((elapsed - options.dwellTime.inMilliseconds) / options.viewDurationUpdateInterval.inMilliseconds).rounded(.down)
            cycle.eventsSent = max(cycle.eventsSent + 1, Int(min(max(0, intervalsPast), 1e15)) + 1)
            state.cycle = cycle
            schedule(&state, after: max(0, nextDue(cycle) - elapsed))
        }
    }

    /// Cycle time (ms) at which the next view event or update is due.
    private func nextDue(_ cycle: Cycle) -> Double {
        options.dwellTime.inMilliseconds + Double(cycle.eventsSent) * options.viewDurationUpdateInterval.inMilliseconds
    }

    private func emitView(_ cycle: Cycle, _ elapsed: Double) {
        let duration = elapsed < 9e15 ? Int(elapsed) : Int(9e15)
        sink.submitView(TrackViewPayload(
            componentId: componentId, viewId: cycle.viewId, experienceId: experienceId,
            optimizationContextId: optimizationContextId, variantIndex: variantIndex,
            viewDuration: .milliseconds(duration), sticky: sticky, stickyTrackingKey: stickyTrackingKey))
    }

    private func schedule(_ state: inout State, after delay: Double) {
        cancelTimer(&state)
        let generation = state.timerGeneration
        state.timer = clock.schedule(after: .milliseconds(delay)) { [weak self] in
            self?.timerFired(generation: generation)
        }
    }

    /// Cancels the pending timer (if any) and invalidates any action already on its way.
    private func cancelTimer(_ state: inout State) {
        state.timer?.cancel()
        state.timer = nil
        state.timerGeneration &+= 1
    }
}
