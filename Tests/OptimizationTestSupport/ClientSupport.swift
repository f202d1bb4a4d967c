import Foundation
import JavaScriptHost
import Logging
import Optimization
import OptimizationTesting
import Synchronization
import Testing
import OptimizationClientFace
import OptimizationServiceFace
import OptimizationEngine

/// A client with a manual clock, initialized with the given event configuration.
package func makeEventClient(
    allowedEventTypes: [String]? = nil, defaults: StorageDefaults? = nil, locale: String? = nil,
    channel: String = "server", logLevel: OptimizationLogLevel = .error, logger: Logger? = nil
) throws -> OptimizationClient {
    var environment = OptimizationClient.Environment(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled)
    if let logger { environment.logger = logger }
    let client = OptimizationClient(environment: environment)
    try client.initialize(config: OptimizationConfig(
        clientId: "test-client", locale: locale, allowedEventTypes: allowedEventTypes, channel: channel,
        logLevel: logLevel, defaults: defaults))
    return client
}

/// Reads what a client publishes on its two streams, never waiting for an element that was not
/// yielded (two ``StreamProbe``s).
package struct EventProbe {
    private var events: StreamProbe<JSONValue>
    private var blocked: StreamProbe<BlockedEvent>

    package init(_ client: OptimizationClient) {
        let eventBroadcaster = client.eventBroadcaster
        let blockedBroadcaster = client.blockedEventBroadcaster
        events = StreamProbe(client.events) { eventBroadcaster.yieldedCount }
        blocked = StreamProbe(client.blockedEvents) { blockedBroadcaster.yieldedCount }
    }

    /// Events accepted since the last call.
    package mutating func newEvents() async -> [JSONValue] {
        await events.newElements()
    }

    /// Blocked calls reported since the last call.
    package mutating func newBlocked() async -> [BlockedEvent] {
        await blocked.newElements()
    }
}

extension OptimizationClient {
    /// A probe of ``queueEvents`` for tests.
    package func queueProbe() -> StreamProbe<QueueEvent> {
        let broadcaster = queueEventBroadcaster
        return StreamProbe(queueEvents) { broadcaster.yieldedCount }
    }
}

/// A client on a manual clock whose Experience and Insights base URLs are `server`'s mounts.
/// With `transport` nil, `initialize` creates the production HTTPFetchTransport (allow-listing
/// exactly those two bases).
package func makeDeliveryClient(
    _ server: LocalOptimizationAPIServer, clock: ManualClock = ManualClock(), transport: (any FetchTransport)? = nil,
    defaults: StorageDefaults? = StorageDefaults(consent: true), locale: String? = nil,
    api: OptimizationAPIConfig? = nil, queuePolicy: QueuePolicy? = nil, logger: Logger? = nil,
    allowedEventTypes: [String]? = nil
) throws -> OptimizationClient {
    var environment = OptimizationClient.Environment(clock: clock, transport: transport, storage: .disabled)
    if let logger { environment.logger = logger }
    let client = OptimizationClient(environment: environment)
    var apiConfig = api ?? OptimizationAPIConfig()
    apiConfig.experienceBaseURL = apiConfig.experienceBaseURL ?? server.experienceBaseURL
    apiConfig.insightsBaseURL = apiConfig.insightsBaseURL ?? server.insightsBaseURL
    try client.initialize(config: OptimizationConfig(
        clientId: "org-1", locale: locale, allowedEventTypes: allowedEventTypes, defaults: defaults, api: apiConfig,
        queuePolicy: queuePolicy))
    return client
}


/// The consent model's seeded generator (the test kit's SplitMix64).
package typealias ConsentModelRandom = SeededRandomNumberGenerator
