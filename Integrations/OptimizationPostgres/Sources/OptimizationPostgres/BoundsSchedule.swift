import Optimization
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// When an append checks the bounds: this store's events and time since its last check
/// (``PostgresOutboxConfiguration/boundsCheckEvents``, ``PostgresOutboxConfiguration/boundsCheckInterval``).
final class BoundsSchedule: Sendable {
    private struct State {
        var eventsSinceCheck = 0
        var lastCheck: ContinuousClock.Instant?
    }
    private let state = Mutex(State())

    /// True when an append of `count` events starting `now` must check the bounds.
    func isDue(adding count: Int, at now: ContinuousClock.Instant, configuration: PostgresOutboxConfiguration) -> Bool {
        state.withLock { state in
            guard let lastCheck = state.lastCheck else { return true }
            return state.eventsSinceCheck + count >= configuration.boundsCheckEvents
                || now - lastCheck >= configuration.boundsCheckInterval
        }
    }

    /// An append of `count` events started at `started` committed (and checked the bounds when
    /// `checked`).
    func committed(_ count: Int, checked: Bool, at started: ContinuousClock.Instant) {
        state.withLock { state in
            if checked {
                state.eventsSinceCheck = 0
                state.lastCheck = started
            } else {
                state.eventsSinceCheck += count
            }
        }
    }
}
