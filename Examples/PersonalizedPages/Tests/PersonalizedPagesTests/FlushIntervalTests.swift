import Foundation
import Optimization
import OptimizationTesting
import PersonalizedPagesApp
import Testing

/// The harness's clock drives the service's timers: the views a page queued leave on the Insights
/// flush interval (30 s, the default) of that clock, which moves only when the test advances it.
@Suite(.hangBound) struct FlushIntervalTests {
    @Test func queuedViewsLeaveWhenTheHarnessClockPassesTheFlushInterval() async throws {
        let clock = ManualClock(start: Date().timeIntervalSince1970 * 1000)
        try await withLocalAPIServer { server in
            try await withApp(server, clock: clock) { baseURL, _ in
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(consent: true)])
                    #expect(try await visitor.get("/").status == 200)
                    clock.advance(by: .seconds(29))
                    #expect(server.insightsEvents.isEmpty, "the views stay queued before the flush interval")
                    clock.advance(by: .seconds(1))
                    try await waitUntil { server.insightsEvents.filter { $0["type"] == "component" }.count == 3 }
                    #expect(server.insightsBatches.count == 1, "one batch of the three views")
                }
            }
        }
    }
}
