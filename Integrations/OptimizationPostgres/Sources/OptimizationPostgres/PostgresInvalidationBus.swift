import Optimization
import Logging
import PostgresNIO
import Synchronization

/// Delivers the invalidations of every replica to this replica's ``ContentfulDeliverySource``s,
/// through PostgreSQL's LISTEN/NOTIFY on ``PostgresConfiguration/invalidationChannel``.
///
/// An invalidation made on any replica (``ContentfulDeliverySource/invalidate(entryId:)`` or
/// ``ContentfulDeliverySource/invalidateAll()`` of a source whose entry store is a
/// ``PostgresEntryStore``, from a webhook or an API call) is sent by that store as a NOTIFY in the
/// transaction that marks the stored copies; the bus of every other replica receives it and
/// applies it with ``ContentfulDeliverySource/applyRemoteInvalidation(_:)`` (not sent on again).
/// The replica's own invalidations are recognized by their origin and not applied twice.
///
/// **The revalidation rule.** NOTIFY is not durable: while the bus's connection is down, the
/// replica cannot know which invalidations it missed. So every time the bus listens again after
/// losing its connection, once LISTEN is in place and before it reads a notification, it calls
/// ``ContentfulDeliverySource/revalidateAll()`` on each source: every
/// cached copy is served again only as a stale-if-error fallback until it is fetched again, from
/// the CDA or from a copy another replica wrote to the entry store after this replica's
/// revalidation (copies written before may predate a missed invalidation, even one that never
/// reached the store because the database was down). A revision older than one a source already
/// served is never taken from the store. While the connection is down the sources keep serving
/// their cached copies. Start the bus before the sources serve (and wait for ``isListening``):
/// invalidations made before the first LISTEN are not delivered, and the first LISTEN revalidates
/// nothing (a starting replica trusts the store's copies).
///
/// The connection is its own (not one of the pool's), with the pool's server, credentials and
/// TLS mode (`sslmode` of the connection string); it is checked every
/// ``PostgresConfiguration/heartbeatInterval`` and re-opened after a loss with a delay from
/// ``PostgresConfiguration/reconnectDelay`` doubling to ``PostgresConfiguration/maximumReconnectDelay``.
///
/// **Threading.** `Sendable`. ``start()`` once, ``shutdown()`` once; the counters are readable from
/// any thread.
public final class PostgresInvalidationBus: Sendable {
    /// The database.
    public let database: OptimizationDatabase
    /// The sources invalidations are applied to.
    public let sources: [ContentfulDeliverySource]

    private struct State {
        var task: Task<Void, Never>?
        var listening = false
        var listenCount = 0
        var received = 0
    }
    private let state = Mutex(State())

    /// A bus applying invalidations to `sources` (not started).
    public init(database: OptimizationDatabase, sources: [ContentfulDeliverySource]) {
        self.database = database
        self.sources = sources
    }

    /// Starts listening in the background (reconnecting until ``shutdown()``). Returns at once;
    /// ``isListening`` tells when LISTEN is in place.
    public func start() {
        state.withLock { state in
            guard state.task == nil else { return }
            state.task = Task { await self.listenLoop() }
        }
    }

    /// Stops listening and closes the connection.
    public func shutdown() async {
        let task = state.withLock { state -> Task<Void, Never>? in
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
        await task?.value
    }

    /// True while LISTEN is in place on a live connection.
    public var isListening: Bool { state.withLock { $0.listening } }

    /// How many times LISTEN was put in place (1 after the first start, +1 per reconnection).
    public var listenCount: Int { state.withLock { $0.listenCount } }

    /// Invalidations received from other replicas and applied.
    public var receivedCount: Int { state.withLock { $0.received } }

    private func listenLoop() async {
        let configuration = database.configuration
        var delay = configuration.reconnectDelay
        var connectionNumber = 0
        while !Task.isCancelled {
            connectionNumber += 1
            do {
                // Bounded by the connection's connect timeout (the operation timeout).
                let connection = try await PostgresConnection.connect(
                    configuration: configuration.singleConnection, id: connectionNumber, logger: database.logger)
                delay = configuration.reconnectDelay
                do {
                    try await listen(on: connection)
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch is CancellationError {
                break
            } catch {
                if Task.isCancelled { break }
                database.metrics.error("bus")
                database.logger.notice("invalidation bus connection lost; revalidating after reconnection",
                                       metadata: ["error": "\(OptimizationDatabase.summary(OptimizationDatabase.integrationError(error, operation: "listen")))"])
            }
            state.withLock { $0.listening = false }
            if Task.isCancelled { break }
            try? await Task.sleep(for: delay)   // reconnect backoff (real time)
            delay = min(delay * 2, configuration.maximumReconnectDelay)
        }
        state.withLock { $0.listening = false }
    }

    /// LISTENs on `connection`, revalidates the sources, applies notifications until the
    /// connection fails (or the heartbeat does).
    private func listen(on connection: PostgresConnection) async throws {
        let configuration = database.configuration
        try await connection.listen(on: configuration.invalidationChannel) { notifications in
            let reconnection = state.withLock { state -> Bool in
                state.listening = true
                state.listenCount += 1
                return state.listenCount > 1
            }
            if reconnection {
                for source in sources { source.revalidateAll() }
                database.metrics.busReconnects.increment()
                database.logger.info("invalidation bus listening again; cached entries are being revalidated")
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await notification in notifications {
                        self.apply(notification.payload)
                    }
                    throw PostgresIntegrationError.database(operation: "listen", detail: "the notification stream ended")
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: configuration.heartbeatInterval)
                        _ = try await withDeadline(configuration.operationTimeout, operation: "bus heartbeat") {
                            try await connection.query("SELECT 1", logger: self.database.logger)
                        }
                    }
                }
                defer { group.cancelAll() }
                try await group.next()
            }
        }
    }

    private func apply(_ payload: String) {
        guard let message = InvalidationMessage.decode(payload) else {
            database.logger.notice("ignored a notification that is not an invalidation", metadata: ["bytes": "\(payload.utf8.count)"])
            return
        }
        guard message.origin != database.replicaId else { return }
        database.metrics.notificationsReceived.increment()
        database.logger.debug("invalidation received", metadata: ["invalidation": "\(message.invalidation)"])
        for source in sources { source.applyRemoteInvalidation(message.invalidation) }
        state.withLock { $0.received += 1 }
    }
}
