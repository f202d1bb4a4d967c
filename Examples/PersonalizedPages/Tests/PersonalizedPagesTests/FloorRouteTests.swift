import AsyncHTTPClient
import Optimization
import OptimizationTesting
import PersonalizedPagesApp
import Testing

/// `GET /floor`: the load test's floor repeats the personalized page's exchanges by hand.
@Suite(.hangBound) struct FloorRouteTests {
    @Test func theFloorRepeatsThePersonalizedPagesExperienceExchangeAndAmortizesItsInsightsBatch() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, app in
                try await withHTTPClient { client in
                    let cookie = "pp_state=" + TestVisitorState.cookie(profileId: "floor-visitor", consent: true)
                    let early = try await HTTPExchange.send(client, .GET, baseURL + "/floor", headers: [("Cookie", cookie)])
                    #expect(early.status == 503, "nothing captured before the service made both exchanges")

                    var visitor = Visitor(baseURL: baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: "floor-visitor", consent: true)])
                    #expect(try await visitor.get("/").status == 200)
                    await app.service.flush()
                    let experienceCalls = server.requests(matching: .experience)
                    let batches = server.insightsBatches.count
                    let original = try #require(experienceCalls.last)

                    // Nine pages of three events: one captured batch per min(25, its size) events.
                    let capturedEvents = server.insightsEvents.count
                    for _ in 0..<9 {
                        let floor = try await HTTPExchange.send(client, .GET, baseURL + "/floor", headers: [("Cookie", cookie)])
                        #expect(floor.status == 200)
                        #expect(floor.headers.first(name: "x-floor-selections").flatMap(Int.init) ?? -1 >= 0, "the answer's selections were read")
                        #expect(String(buffer: floor.body).contains(#"data-mode="floor""#))
                    }
                    let repeated = server.requests(matching: .experience).dropFirst(experienceCalls.count)
                    #expect(repeated.count == 9, "one Experience exchange per floor page")
                    #expect(repeated.allSatisfy { $0.method == original.method && $0.path == original.path && $0.body == original.body })
                    // The batches go out in the background: the expected count arrives, never more.
                    let expectedBatches = 27 / min(25, max(1, capturedEvents))
                    try await waitUntil { server.insightsBatches.count >= batches + expectedBatches }
                    #expect(server.insightsBatches.count == batches + expectedBatches)
                }
            }
        }
    }
}
