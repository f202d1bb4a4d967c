@testable import OptimizationDelivery
import Synchronization
import Testing
import OptimizationTestSupport

/// `flush()`'s loop over flights (`runFlights`): it goes on while the flights it starts move
/// events out, whatever the queue's size does (a durable window refills to its capacity after
/// every flight), and stops at the first flight that sends nothing.
@Suite("Flight loop", .hangBound)
struct FlightLoopTests {
    /// A queue of `backlog` events behind a window of `window`: each flight sends the window,
    /// which refills from the backlog; `failing` flights send nothing.
    final class WindowedBacklog: Sendable {
        private struct State {
            var backlog: Int
            var sent: UInt64 = 0
            var flights = 0
        }
        private let state: Mutex<State>
        private let window: Int
        private let failingFlights: Set<Int>

        init(backlog: Int, window: Int, failingFlights: Set<Int> = []) {
            state = Mutex(State(backlog: backlog))
            self.window = window
            self.failingFlights = failingFlights
        }

        var remaining: Int { state.withLock { min($0.backlog, window) } }
        var sent: UInt64 { state.withLock { $0.sent } }
        var flights: Int { state.withLock { $0.flights } }

        /// Starts a flight of its own every time (no flight is ever in progress), while events remain.
        func begin() -> (task: Task<Void, Never>, started: Bool)? {
            guard remaining > 0 else { return nil }
            let failing = state.withLock { state -> Bool in
                state.flights += 1
                return failingFlights.contains(state.flights)
            }
            return (Task { [self] in
                guard !failing else { return }
                state.withLock { state in
                    let moved = min(state.backlog, window)
                    state.backlog -= moved
                    state.sent += UInt64(moved)
                }
            }, true)
        }
    }

    @Test func flightsGoOnWhileTheyDeliverThoughTheWindowStaysFull() async {
        let queue = WindowedBacklog(backlog: 1_000, window: 100)
        await runFlights(begin: { queue.begin() }, remaining: { queue.remaining }, sent: { queue.sent })
        #expect(queue.sent == 1_000, "the window stayed at 100 until the last flight; progress is what was sent")
        #expect(queue.flights == 10)
    }

    @Test func aFlightThatSendsNothingEndsTheFlushAndLeavesTheRestForTheRetry() async {
        let queue = WindowedBacklog(backlog: 1_000, window: 100, failingFlights: [3])
        await runFlights(begin: { queue.begin() }, remaining: { queue.remaining }, sent: { queue.sent })
        #expect(queue.sent == 200)
        #expect(queue.flights == 3)
    }
}
