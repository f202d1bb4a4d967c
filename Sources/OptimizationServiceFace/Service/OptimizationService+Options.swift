import OptimizationServiceDelivery
import OptimizationVocabulary
import OptimizationDelivery
import CoreMetrics
import Foundation
import JavaScriptHost
import Logging
import OrderedCollections
import Synchronization
import Tracing
import HostPlatform
import OptimizationJSON
import OptimizationContent
import OptimizationTransport
import OptimizationEngine

extension OptimizationService {
    /// Service-only settings.
    public struct Options: Sendable {
        /// Engines in the pool; nil means one per active processor core.
        public var engines: Int?
        /// Default latency budget of a request's Experience call (per request:
        /// ``RequestOptions/experienceTimeout``), at least 1 ms. Default 1.5 s. A call whose
        /// budget runs out has its HTTP request cancelled and its connection closed.
        public var experienceTimeout: Duration
        /// Capacity of the Insights queues together (oldest dropped beyond it), split evenly over
        /// the queues (``deliveryShards``). Default 10 000.
        public var insightsMaxEvents: Int
        /// Delivery shards: Swift Insights queues (no engine on the delivery path) that take the
        /// events of different profiles in parallel (every event of a profile goes to the same shard, so a
        /// profile's events stay in order and are batched together). Each flushes on its own
        /// (at 25 queued events, on the interval, on ``OptimizationService/flush()``), so at
        /// most this many Insights requests are in flight. Nil: one per pool engine. With an
        /// ``outboxDirectory`` there is always one.
        public var deliveryShards: Int?
        /// How long ``OptimizationService/shutdown()`` (and graceful shutdown of ``run()``) may
        /// spend flushing what is queued, in the time of ``Environment/clock`` (a timer on it,
        /// like every interval of the service). Default 10 s.
        public var shutdownFlushTimeout: Duration
        /// Where the durable outbox keeps accepted Insights events until they are delivered
        /// (the OptimizationDelivery article “The durable outbox”); nil keeps them in memory only (lost if the process dies). One
        /// process per directory.
        public var outboxDirectory: URL?
        /// Durability policy, bounds and time to live of the outbox.
        public var outbox: OutboxConfiguration
        /// An outbox shared by every replica of the service (`SharedOutbox`): accepted Insights
        /// events are stored there, outside the process, and any replica delivers them. Nil (the
        /// default) for none. Not together with ``outboxDirectory``.
        public var sharedOutbox: SharedOutbox?

        /// Creates service options.
        /// - Parameters:
        ///   - engines: engines in the pool; nil (the default) means one per active processor core.
        ///   - experienceTimeout: default latency budget of a request's Experience call; default
        ///     1.5 s.
        ///   - insightsMaxEvents: capacity of the Insights queues together; default 10 000.
        ///   - deliveryShards: Insights queues taking events in parallel; nil (the default) means
        ///     one per pool engine (always one with an outbox).
        ///   - shutdownFlushTimeout: how long shutdown may spend flushing; default 10 seconds.
        ///   - outboxDirectory: directory of the durable outbox; nil (the default) keeps queued
        ///     events in memory only.
        ///   - outbox: durability policy, bounds and time to live of the outbox; default
        ///     `OutboxConfiguration()`.
        ///   - sharedOutbox: an outbox shared by the service's replicas; nil (the default) for none.
        public init(
            engines: Int? = nil, experienceTimeout: Duration = .milliseconds(1500), insightsMaxEvents: Int = 10_000,
            deliveryShards: Int? = nil, shutdownFlushTimeout: Duration = .seconds(10), outboxDirectory: URL? = nil,
            outbox: OutboxConfiguration = OutboxConfiguration(), sharedOutbox: SharedOutbox? = nil
        ) {
            self.engines = engines
            self.experienceTimeout = experienceTimeout
            self.insightsMaxEvents = insightsMaxEvents
            self.deliveryShards = deliveryShards
            self.shutdownFlushTimeout = shutdownFlushTimeout
            self.outboxDirectory = outboxDirectory
            self.outbox = outbox
            self.sharedOutbox = sharedOutbox
        }
    }
}
