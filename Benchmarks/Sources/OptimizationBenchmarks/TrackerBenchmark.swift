import Dispatch
import JavaScriptHost
import Optimization

/// Measures the cost of 1,000 concurrent `ViewTrackingController`s for `optimization bench`.
/// Measurement only: all tracking logic lives in the Optimization module.
enum TrackerBenchmark {
    static let trackerCount = 1_000
    static let simulatedMs = 60_000.0
    static let stepMs = 100.0

    /// Creates 1,000 controllers on `client`, makes them all visible, advances `clock` through
    /// 60 s of simulated time in 100 ms steps (view events, duration updates), then hides them
    /// (final updates) and stops them. Every event goes through `client` (and its consent gate).
    ///
    /// - Precondition: `clock` is `client.environment.clock` (controllers run their timers on
    ///   the client's clock).
    /// - Returns, in this order: `trackers_1000_create_us` (total µs to create the 1,000),
    ///   `trackers_1000_update_us` (mean µs of one `updateVisibility` call: the visible and the
    ///   hidden transitions, the latter including the final update's submission),
    ///   `trackers_1000_sim_60s_ms` (wall ms to simulate the 60 s, events included) and
    ///   `trackers_1000_pending_timers_max` (most timers pending on the clock at any step,
    ///   including the engine's own).
    static func run(client: OptimizationClient, clock: ManualClock) -> [(String, Double)] {
        precondition(
            (client.environment.clock as? ManualClock) === clock,
            "TrackerBenchmark needs a client whose environment.clock is the given ManualClock")

        var start = DispatchTime.now().uptimeNanoseconds
        var trackers: [ViewTrackingController] = []
        trackers.reserveCapacity(trackerCount)
        for index in 0..<trackerCount {
            // Default options are valid and the id is not empty: this cannot throw.
            guard let tracker = try? ViewTrackingController(client: client, componentId: "bench-entry-\(index)") else {
                preconditionFailure("could not create a view tracking controller")
            }
            trackers.append(tracker)
        }
        let createNs = DispatchTime.now().uptimeNanoseconds - start

        start = DispatchTime.now().uptimeNanoseconds
        for tracker in trackers { tracker.updateVisibility(ratio: 1) }
        var updateNs = DispatchTime.now().uptimeNanoseconds - start
        var pendingMax = clock.pendingTimerCount

        start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<Int(simulatedMs / stepMs) {
            clock.advance(by: .milliseconds(stepMs))
            pendingMax = max(pendingMax, clock.pendingTimerCount)
        }
        let simulateNs = DispatchTime.now().uptimeNanoseconds - start

        start = DispatchTime.now().uptimeNanoseconds
        for tracker in trackers { tracker.updateVisibility(ratio: 0) }
        updateNs += DispatchTime.now().uptimeNanoseconds - start
        for tracker in trackers { tracker.stop() }

        return [
            ("trackers_1000_create_us", Double(createNs) / 1_000),
            ("trackers_1000_update_us", Double(updateNs) / 1_000 / Double(2 * trackerCount)),
            ("trackers_1000_sim_60s_ms", Double(simulateNs) / 1_000_000),
            ("trackers_1000_pending_timers_max", Double(pendingMax)),
        ]
    }
}
