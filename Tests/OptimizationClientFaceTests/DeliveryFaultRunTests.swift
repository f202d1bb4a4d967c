import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import OptimizationTesting
import Synchronization
import Testing

/// Forwards to the production transport and records, per request, the manual-clock time at which
/// the engine handed it over and whether it failed (non-2xx or a transport error).
///
/// The fault run moves the clock from one due timer to the next and lets every request finish
/// before moving on, so the recorded time is exactly the engine's time when it decided to send,
/// and a failure is processed at that same time.
final class ClockStampingTransport: FetchTransport, Sendable {
    struct Record: Sendable {
        let queue: QueueEvent.Queue
        let body: String
        let clockTime: Double
        var failed: Bool?
    }

    private let inner: HTTPFetchTransport
    private let clock: ManualClock
    private let records = Mutex<[Record]>([])

    init(inner: HTTPFetchTransport, clock: ManualClock) {
        self.inner = inner
        self.clock = clock
    }

    var all: [Record] { records.withLock { $0 } }

    func send(_ request: FetchRequest) async throws -> FetchResponse {
        let queue: QueueEvent.Queue = request.url.contains("/experience/") ? .experience : .insights
        let index = records.withLock { records -> Int in
            records.append(Record(queue: queue, body: request.body ?? "", clockTime: clock.now()))
            return records.count - 1
        }
        do {
            let response = try await inner.send(request)
            records.withLock { $0[index].failed = !(200..<300).contains(response.status) }
            return response
        } catch {
            records.withLock { $0[index].failed = true }
            throw error
        }
    }
}

@Suite("Delivery fault run")
struct DeliveryFaultRunTests {
    static let circuitOpenMs = 2000
    static let maxConsecutiveFailures = 3

    /// Per repetition: isolated 500s, 429/503 with Retry-After, timeouts (server slower than the
    /// transport timeout), dropped connections, and two runs of three failures (circuit opens).
    static func script(repeats: Int) -> [ScriptedResponse] {
        let pattern: [ScriptedResponse] = [
            .standard, .standard, .status(500), .standard, .standard,
            .retryAfter(seconds: 1, status: 429), .standard, .standard,
            .delay(.milliseconds(5000)), .standard, .dropConnection, .standard, .standard,
            .retryAfter(seconds: 1, status: 503), .standard,
            .status(500), .status(502), .dropConnection,
            .standard, .standard, .standard, .standard,
            .delay(.milliseconds(5000)), .status(503), .status(500),
            .standard, .standard, .standard,
        ]
        return Array(repeating: pattern, count: repeats).flatMap { $0 }
    }

    @Test func aThousandConsentedEventsSurviveScriptedFaultsAtLeastOnceInOrder() async throws {
        let started = ContinuousClock.now
        try await LocalOptimizationAPIServer.withRunning { server in
            let experienceScript = Self.script(repeats: 2)
            let insightsScript = Self.script(repeats: 2)
            server.enqueue(contentsOf: experienceScript, for: .experience)
            server.enqueue(contentsOf: insightsScript, for: .insights)
            let clock = ManualClock()
            let http = try HTTPFetchTransport(configuration: .init(
                allowedBaseURLs: [server.experienceBaseURL, server.insightsBaseURL], requestTimeout: .milliseconds(200)))
            let transport = ClockStampingTransport(inner: http, clock: clock)
            let client = try makeDeliveryClient(
                server, clock: clock, transport: transport,
                defaults: StorageDefaults(consent: true, persistenceConsent: true),
                queuePolicy: QueuePolicy(flush: QueueFlushPolicy(
                    flushInterval: .milliseconds(1000), baseBackoff: .milliseconds(50), maxBackoff: .milliseconds(400), jitterRatio: 0.2,
                    maxConsecutiveFailures: Self.maxConsecutiveFailures, circuitOpenDuration: .milliseconds(Self.circuitOpenMs))))
            var events = EventProbe(client)
            var reports = client.queueProbe()
            // Moves the clock by `milliseconds`, stopping at every due timer until what it started
            // (retries, interval flushes) has finished.
            func advance(by milliseconds: Double) async throws {
                let target = clock.now() + milliseconds
                while let due = clock.nextDueTime, due <= target {
                    clock.advance(by: .milliseconds(due - clock.now()))
                    try await client.flush()
                }
                clock.advance(by: .milliseconds(target - clock.now()))
                try await client.flush()
            }

            // 1,000 consented events: 250 track (Experience), 500 views and 250 clicks (Insights).
            // The clock moves only between blocks, after every request in flight has finished.
            for index in 0..<1000 {
                switch index % 4 {
                case 0:
                    #expect(try await client.track(event: "t\(index)", properties: ["n": .number(JSONNumber(index))]).accepted)
                case 1, 2:
                    try await client.trackView(TrackViewPayload(
                        componentId: "c\(index)", viewId: "v\(index)", variantIndex: 0, viewDuration: .milliseconds(1000)))
                default:
                    try await client.trackClick(TrackClickPayload(componentId: "c\(index)"))
                }
                if index % 20 == 19 {
                    try await client.flush()
                    try await advance(by: 250)
                }
            }
            var rounds = 0
            while client.queueSizes().map({ $0.experience + $0.insights }) != 0, rounds < 40 {
                try await advance(by: 2500)
                rounds += 1
            }
            #expect(client.queueSizes()! == (0, 0), "everything delivered after \(rounds) drain rounds")

            let published = await events.newEvents()
            let experienceIDs = published.filter { $0["type"] == "track" }.compactMap { $0["messageId"]?.stringValue }
            let insightsIDs = published.filter { $0["type"] != "track" }.compactMap { $0["messageId"]?.stringValue }
            #expect(experienceIDs.count == 250 && insightsIDs.count == 750)
            let queueReports = await reports.newElements()
            #expect(!queueReports.contains { $0.type == .offlineDrop || $0.type == .batchDropped || $0.type == .deliveryDisabled })

            for (queue, matcher, ids, script) in [
                (QueueEvent.Queue.experience, RequestMatcher.experience, experienceIDs, experienceScript),
                (QueueEvent.Queue.insights, RequestMatcher.insights, insightsIDs, insightsScript),
            ] {
                let requests = server.requests(matching: matcher)
                let records = transport.all.filter { $0.queue == queue }
                // The engine's requests, in order, are exactly what the server received, in order.
                #expect(records.map(\.body) == requests.map(\.body), "\(queue): server arrivals match the sends")
                func scripted(_ index: Int) -> ScriptedResponse { index < script.count ? script[index] : .standard }
                // Every scripted fault failed on the client. (A normal answer may still time out on
                // a heavily loaded machine: that only adds a re-send, which the checks below allow.)
                #expect(records.indices.allSatisfy { scripted($0) == .standard || records[$0].failed == true }, "\(queue): faults fail")
                let slowNormalAnswers = records.indices.filter { scripted($0) == .standard && records[$0].failed == true }.count

                // At least once: every event is in a request the server answered normally.
                var delivered = Set<String>()
                var firstSeen: [String] = []
                var copies: [String: JSONValue] = [:]
                var duplicates = 0
                for (index, request) in requests.enumerated() {
                    for event in request.deliveredEvents {
                        let id = try #require(event["messageId"]?.stringValue)
                        if let earlier = copies[id] {
                            duplicates += 1
                            #expect(earlier == event, "\(queue): a duplicate is the same event (\(id))")
                        } else {
                            copies[id] = event
                            firstSeen.append(id)
                        }
                        if scripted(index) == .standard { delivered.insert(id) }
                    }
                }
                #expect(Set(ids).isSubset(of: delivered), "\(queue): \(Set(ids).subtracting(delivered).count) event(s) never delivered")
                #expect(firstSeen == ids, "\(queue): order preserved")
                #expect(duplicates > 0, "\(queue): the faults caused re-sends (else the run proves nothing)")

                // Nothing is sent while the circuit is open: recompute the openings from the
                // outcomes and check the next send's clock time, and agree with the reports.
                var consecutive = 0
                var openings: [Double] = []
                for (index, record) in records.enumerated() {
                    guard record.failed == true else {
                        consecutive = 0
                        continue
                    }
                    consecutive += 1
                    guard consecutive >= Self.maxConsecutiveFailures else { continue }
                    openings.append(record.clockTime)
                    if index + 1 < records.count {
                        #expect(records[index + 1].clockTime >= record.clockTime + Double(Self.circuitOpenMs),
                                "\(queue): request \(index + 1) sent \(records[index + 1].clockTime - record.clockTime) ms after the circuit opened")
                    }
                }
                let reportedOpenings = queueReports.filter { $0.queue == queue && $0.type == .circuitOpen }
                #expect(openings.count >= 2, "\(queue): the circuit opened \(openings.count) time(s)")
                #expect(reportedOpenings.map(\.timestamp) == openings, "\(queue): circuitOpen reports match the outcomes")
                #expect(reportedOpenings.allSatisfy { $0.context["retryDelayMs"]?.intValue == Self.circuitOpenMs })
                #expect(queueReports.contains { $0.queue == queue && $0.type == .flushRecovered })
                print("fault run \(queue): \(ids.count) events, \(requests.count) requests, \(duplicates) re-sent copies, circuit opened \(openings.count)×, \(slowNormalAnswers) normal answer(s) too slow")
            }
            client.destroy()
            try await http.shutdown()
        }
        // About 2 s on its own; no wall-clock bound (a hang is caught by the CI time limit).
        print("fault run: \(ContinuousClock.now - started)")
    }
}
