import Optimization
import Synchronization

/// The service's HTTP transport, recording the first Experience request and the first Insights
/// batch the service sends, so that `GET /floor` (``FloorRoute``) can make the same exchanges
/// without an engine: the hand-written minimum a personalized page costs, measured beside it by
/// `scripts/load-test`.
///
/// Recording stops once both are captured: after that a send costs one atomic load more than the
/// wrapped transport's. The captured requests are the first visitor's (their URL names its
/// profile and their body holds its events): use the route with one visitor, as the load test
/// does, never as a page for visitors.
///
/// **Threading.** Thread-safe; sends run concurrently.
public final class FloorExchange: FetchTransport, Sendable {
    /// What the service sent first to each API.
    public struct Captured: Sendable {
        /// The first Experience API request (a profile upsert).
        public var experience: FetchRequest
        /// The first Insights API batch.
        public var insights: FetchRequest
        /// The events in ``insights`` (its `events` array summed over its profiles).
        public var insightsEventCount: Int
    }

    /// The transport every request goes through (the app's HTTP client).
    public let transport: any FetchTransport
    private let insightsURL: String
    private let complete = Atomic<Bool>(false)
    private let recorded = Mutex<(experience: FetchRequest?, insights: FetchRequest?)>((nil, nil))
    /// Events ``FloorRoute`` counted, for the amortized Insights batch.
    private let events = Atomic<Int>(0)

    /// - Parameters:
    ///   - transport: carries every request.
    ///   - insightsURL: the Insights batch URL; every other request counts as an Experience one.
    public init(transport: any FetchTransport, insightsURL: String) {
        self.transport = transport
        self.insightsURL = insightsURL
    }

    public func send(_ request: FetchRequest) async throws -> FetchResponse {
        if !complete.load(ordering: .acquiring) { record(request) }
        return try await transport.send(request)
    }

    /// Both exchanges, once the service has made each at least once; nil before.
    public var captured: Captured? {
        guard complete.load(ordering: .acquiring) else { return nil }
        return recorded.withLock { recorded in
            guard let experience = recorded.experience, let insights = recorded.insights else { return nil }
            return Captured(experience: experience, insights: insights, insightsEventCount: Self.eventCount(of: insights))
        }
    }

    /// Counts `count` events of a floor page; true when they complete a batch of `batchSize`
    /// (the caller then sends the captured Insights batch once).
    func countEvents(_ count: Int, batchSize: Int) -> Bool {
        let before = events.wrappingAdd(count, ordering: .relaxed).oldValue
        return before / max(1, batchSize) != (before + count) / max(1, batchSize)
    }

    private func record(_ request: FetchRequest) {
        let isInsights = request.url == insightsURL
        let done = recorded.withLock { recorded -> Bool in
            if isInsights {
                if recorded.insights == nil { recorded.insights = request }
            } else if recorded.experience == nil {
                recorded.experience = request
            }
            return recorded.experience != nil && recorded.insights != nil
        }
        if done { complete.store(true, ordering: .releasing) }
    }

    /// The number of events in an Insights batch body (`[{"profile":…,"events":[…]}, …]`).
    private static func eventCount(of request: FetchRequest) -> Int {
        guard let body = request.body, let batches = try? JSONValue(jsonText: body).arrayValue else { return 0 }
        return batches.reduce(0) { $0 + ($1["events"]?.arrayValue?.count ?? 0) }
    }
}
