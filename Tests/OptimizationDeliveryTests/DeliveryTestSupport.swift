import OptimizationDelivery
import Foundation
import JavaScriptHost
import Logging
import OptimizationJSON
import Synchronization

/// Events of profile `profile`, numbered from `from`.
func events(_ count: Int, profile: String = "p1", from start: Int = 0) -> [InsightsEvent] {
    (start..<(start + count)).map { index in
        InsightsEvent(
            profileId: profile, profileJSON: #"{"id":"\#(profile)"}"#, messageId: "\(profile)-e\(index)", consent: true,
            eventJSON: #"{"type":"component","messageId":"\#(profile)-e\#(index)","context":{"gdpr":{"isConsentGiven":true}}}"#)
    }
}

/// What a queue reported.
final class Reports: Sendable {
    private let state = Mutex<(events: [QueueEvent], removed: [(ids: [String], reason: InsightsQueue.Removal)])>(([], []))

    var queueEvents: [QueueEvent] { state.withLock { $0.events } }
    var types: [QueueEventType] { queueEvents.map(\.type) }
    var removed: [(ids: [String], reason: InsightsQueue.Removal)] { state.withLock { $0.removed } }

    func record(_ event: QueueEvent) { state.withLock { $0.events.append(event) } }
    func record(_ ids: [String], _ reason: InsightsQueue.Removal) { state.withLock { $0.removed.append((ids, reason)) } }
}

/// A queue over `transport` on `clock`, jitter 0 unless given; `url` is the events URL (a local
/// API server's, or a placeholder the transport never dials).
func makeQueue(
    transport: any FetchTransport, clock: ManualClock, policy: DeliveryPolicy = .standard, outbox: DurableOutbox? = nil,
    reports: Reports = Reports(), random: @escaping @Sendable () -> Double = { 0 },
    url: String = "http://127.0.0.1:1/insights/v1/organizations/org/environments/main/events"
) -> InsightsQueue {
    InsightsQueue(
        url: url, policy: policy, transport: transport,
        clock: clock, outbox: outbox, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), random: random,
        onQueueEvent: { reports.record($0) }, onRemoved: { reports.record($0, $1) })
}

/// The message ids a request carried, in order.
func messageIds(_ request: FetchRequest) -> [String] {
    guard let body = request.body, let batches = try? JSONValue(jsonText: body).arrayValue else { return [] }
    return batches.flatMap { $0["events"]?.arrayValue ?? [] }.compactMap { $0["messageId"]?.stringValue }
}

/// A fresh directory under the temporary directory.
func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("delivery-tests-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

extension DeliveryPolicy {
    static func with(_ change: (inout DeliveryPolicy) -> Void) -> DeliveryPolicy {
        var policy = DeliveryPolicy.standard
        change(&policy)
        return policy
    }
}
