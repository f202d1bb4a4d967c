import JavaScriptHost
import OptimizationDelivery
import OptimizationJSON
import Testing

@Suite("Delivery policy, outcomes and the circuit")
struct DeliveryPolicyTests {
    @Test func aQueuePolicyResolvesToTheDefaultsAndNormalisedNumbers() {
        #expect(DeliveryPolicy(nil) == .standard)
        let policy = DeliveryPolicy(QueuePolicy(flush: QueueFlushPolicy(
            flushInterval: .microseconds(10), baseBackoff: .seconds(2), maxBackoff: .seconds(1), jitterRatio: 7,
            maxConsecutiveFailures: 0, circuitOpenDuration: .milliseconds(1_500))), insightsMaxEvents: 40)
        #expect(policy.flushInterval == .seconds(30), "shorter than 1 ms: the default")
        #expect(policy.maxBackoff == .seconds(2), "raised to the base backoff")
        #expect(policy.jitterRatio == 1)
        #expect(policy.maxConsecutiveFailures == 1)
        #expect(policy.circuitOpenDuration == .milliseconds(1_500))
        #expect(policy.insightsMaxEvents == 40)
    }

    @Test func theBackoffDoublesUpToItsCapWithJitterOnTop() {
        let policy = DeliveryPolicy.standard
        #expect(policy.retryDelayMilliseconds(consecutiveFailures: 1, random: 0) == 500)
        #expect(policy.retryDelayMilliseconds(consecutiveFailures: 3, random: 0) == 2_000)
        #expect(policy.retryDelayMilliseconds(consecutiveFailures: 3, random: 0.5) == 2_200)
        #expect(policy.retryDelayMilliseconds(consecutiveFailures: 10, random: 0) == 30_000)
        #expect(policy.retryDelayMilliseconds(consecutiveFailures: 10_000, random: 0.999) == 35_994)
        #expect(policy.retryDelayMilliseconds(consecutiveFailures: 0, random: -3) == 500)
    }

    @Test func everyStatusHasOneKindAndRetryAfterIsReadOnlyFor429And503() {
        let now = 1_767_225_600_000.0
        #expect(DeliveryOutcome(response: FetchResponse(status: 202), api: "Insights", now: now) == .delivered(status: 202))
        #expect(DeliveryOutcome(response: FetchResponse(status: 404), api: "Insights", now: now) == .disable(status: 404, reason: "Insights API answered 404 Not Found"))
        #expect(DeliveryOutcome(response: FetchResponse(status: 422), api: "Insights", now: now) == .drop(status: 422, reason: "Insights API answered 422 Unprocessable Entity"))
        #expect(DeliveryOutcome(response: FetchResponse(status: 429, headers: ["Retry-After": "7"]), api: "Insights", now: now)
            == .retry(status: 429, reason: "Insights API answered 429 Too Many Requests", retryAfterMilliseconds: 7_000))
        #expect(DeliveryOutcome(response: FetchResponse(status: 500, headers: ["retry-after": "7"]), api: "Insights", now: now)
            == .retry(status: 500, reason: "Insights API answered 500 Internal Server Error", retryAfterMilliseconds: nil))
        #expect(DeliveryOutcome(response: FetchResponse(status: 302), api: "Insights", now: now).status == 302)
        #expect(DeliveryOutcome.kind(ofStatus: 302) == "retry")
        #expect(DeliveryOutcome.kind(ofStatus: 408) == "retry")
        // 2026-01-01T00:00:30Z is 30 s after `now`; a past date waits 0.
        #expect(DeliveryOutcome.retryAfterMilliseconds("Thu, 01 Jan 2026 00:00:30 GMT", now: now) == 30_000)
        #expect(DeliveryOutcome.retryAfterMilliseconds("Wed, 31 Dec 2025 00:00:00 GMT", now: now) == 0)
        #expect(DeliveryOutcome.retryAfterMilliseconds("soon", now: now) == nil)
        #expect(DeliveryOutcome.retryAfterMilliseconds(" ", now: now) == nil)
    }

    /// The one table of status kinds, over every status 100–599: Swift delivers, and a service
    /// engine is handed this table (`statusKindTable`) instead of keeping one of its own.
    @Test func everyStatusHasItsKindInTheOneTable() throws {
        func expected(_ status: Int) -> String {
            if (200...299).contains(status) { return "success" }
            if [401, 403, 404].contains(status) { return "disable" }
            if (400...499).contains(status), status != 408, status != 429 { return "drop" }
            return "retry"
        }
        let table = DeliveryOutcome.statusKindTable
        let fallback = try #require(table["fallback"]?.stringValue)
        #expect(fallback == "retry")
        let listed = try #require(table["statuses"]?.objectValue)
        for status in 100...599 {
            #expect(DeliveryOutcome.kind(ofStatus: status) == expected(status), "status \(status)")
            #expect((listed[String(status)]?.stringValue ?? fallback) == expected(status), "the table's status \(status)")
        }
        #expect(listed.keys.allSatisfy { Int($0).map { (100...599).contains($0) } == true }, "only statuses 100–599 are listed")
        #expect(listed.values.allSatisfy { $0.stringValue != fallback }, "only the statuses whose kind is not the fallback")
    }

    @Test func theCircuitOpensAtTheLimitAndAdmitsOneProbeAfterItsWindow() {
        let clock = ManualClock()
        let circuit = DeliveryCircuit(policy: .with { $0.maxConsecutiveFailures = 2; $0.circuitOpenDuration = .seconds(5) }, clock: clock)
        #expect(circuit.admit())
        #expect(!circuit.record(.transientFailure(retryAfterMilliseconds: nil)))
        #expect(circuit.record(.transientFailure(retryAfterMilliseconds: 9_000)), "the limit opens it")
        #expect(!circuit.admit())
        clock.advance(by: .seconds(5))
        #expect(circuit.isOpen, "a Retry-After longer than the window keeps it open")
        clock.advance(by: .seconds(4))
        #expect(circuit.admit(), "the probe")
        #expect(!circuit.admit(), "others wait for the probe")
        #expect(!circuit.record(.neutral))
        #expect(circuit.admit(), "a probe without a request frees the way")
        #expect(!circuit.record(.answered))
        #expect(circuit.admit() && circuit.admit())
        #expect(circuit.consecutiveFailures == 0)
    }

    @Test func theEventsURLFollowsTheAPIVersion() {
        #expect(InsightsEndpoint.eventsURL(baseURL: "http://h/insights/", apiVersion: "v1", tenantId: "org 1", environment: "")
            == "http://h/insights/v1/organizations/org%201/environments/main/events")
        #expect(InsightsEndpoint.eventsURL(baseURL: nil, apiVersion: "v2", tenantId: "space", environment: "dev")
            == "https://ingest.insights.ninetailed.co/v2/spaces/space/environments/dev/events")
        // The API's v1 and v2 vectors: each version's default environment, segments percent-encoded.
        #expect(InsightsEndpoint.eventsURL(baseURL: nil, apiVersion: "v2", tenantId: "space-1", environment: "")
            == "https://ingest.insights.ninetailed.co/v2/spaces/space-1/environments/master/events")
        #expect(InsightsEndpoint.eventsURL(baseURL: nil, apiVersion: "v1", tenantId: "key_123", environment: "")
            == "https://ingest.insights.ninetailed.co/v1/organizations/key_123/environments/main/events")
        #expect(InsightsEndpoint.eventsURL(baseURL: "https://h/", apiVersion: "v1", tenantId: "a b", environment: "env/1")
            == "https://h/v1/organizations/a%20b/environments/env%2F1/events")
    }

    @Test func anItemIsReadWithoutQuotingItsContentInErrors() throws {
        let event = try InsightsEvent(itemJSON: #"{"profile":{"id":"p"},"event":{"messageId":"m","context":{"gdpr":{"isConsentGiven":true}}}}"#)
        #expect(event.profileId == "p" && event.messageId == "m" && event.consent)
        #expect(event.itemJSON == #"{"profile":{"id":"p"},"event":{"messageId":"m","context":{"gdpr":{"isConsentGiven":true}}}}"#)
        #expect(throws: InsightsEventError.notJSON) { try InsightsEvent(itemJSON: "{secret") }
        #expect(throws: InsightsEventError.wrongShape("the event has no messageId")) {
            try InsightsEvent(itemJSON: #"{"profile":{},"event":{"secret":1}}"#)
        }
        #expect(throws: InsightsEventError.wrongShape("the item has no profile object")) { try InsightsEvent(itemJSON: "{}") }
    }
}
