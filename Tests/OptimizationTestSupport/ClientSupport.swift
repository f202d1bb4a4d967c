import Foundation
import JavaScriptHost
import Logging
import Optimization
import OptimizationTesting
import Synchronization
import Testing
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
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
/// yielded: it compares the broadcasters' yield counters with what it has read.
package struct EventProbe {
    package let client: OptimizationClient
    private var eventIterator: AsyncStream<JSONValue>.AsyncIterator
    private var blockedIterator: AsyncStream<BlockedEvent>.AsyncIterator
    private var eventsRead: Int
    private var blockedRead: Int

    package init(_ client: OptimizationClient) {
        self.client = client
        eventIterator = client.events.makeAsyncIterator()
        blockedIterator = client.blockedEvents.makeAsyncIterator()
        eventsRead = client.eventBroadcaster.yieldedCount
        blockedRead = client.blockedEventBroadcaster.yieldedCount
    }

    /// Events accepted since the last call.
    package mutating func newEvents() async -> [JSONValue] {
        let available = client.eventBroadcaster.yieldedCount - eventsRead
        var result: [JSONValue] = []
        for _ in 0..<max(0, available) {
            guard let event = await eventIterator.next() else { break }
            result.append(event)
        }
        eventsRead += available
        return result
    }

    /// Blocked calls reported since the last call.
    package mutating func newBlocked() async -> [BlockedEvent] {
        let available = client.blockedEventBroadcaster.yieldedCount - blockedRead
        var result: [BlockedEvent] = []
        for _ in 0..<max(0, available) {
            guard let blocked = await blockedIterator.next() else { break }
            result.append(blocked)
        }
        blockedRead += available
        return result
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
