import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The listening half of the test kit's servers: an HTTP/1.1 server on `127.0.0.1` and an
/// ephemeral port, one event-loop thread, every connection answered by a handler of its own
/// (`makeHandler`, called on the connection's event loop). Thread-safe; ``start()`` once until
/// ``stop()``.
final class LoopbackHTTPListener: Sendable {
    private enum Lifecycle: Sendable {
        case idle
        case starting
        case running(group: MultiThreadedEventLoopGroup, channel: any Channel, port: Int)
    }

    private let makeHandler: @Sendable () -> any ChannelHandler
    private let lifecycle = Mutex(Lifecycle.idle)
    private let logger: Logger
    /// Names the server in its log lines ("local API server", …).
    private let name: String

    /// A listener whose connections each get the handler `makeHandler` makes (after the HTTP/1.1
    /// server pipeline).
    init(name: String, logger: Logger, makeHandler: @escaping @Sendable () -> any ChannelHandler) {
        self.makeHandler = makeHandler
        self.name = name
        self.logger = logger
    }

    /// A listener whose connections a `LocalAPIChannelHandler` over `state` answers.
    convenience init(state: LocalAPIServerState, name: String, logger: Logger) {
        self.init(name: name, logger: logger) { LocalAPIChannelHandler(state: state) }
    }

    deinit {
        if case .running(let group, _, _) = lifecycle.withLock({ $0 }) {
            group.shutdownGracefully { _ in }
        }
    }

    /// Binds `127.0.0.1` on an ephemeral port and starts answering.
    /// - Throws: ``LocalAPIServerError/alreadyStarted``, or the bind error.
    func start() async throws {
        try lifecycle.withLock { current in
            guard case .idle = current else { throw LocalAPIServerError.alreadyStarted }
            current = .starting
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let makeHandler = self.makeHandler
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.backlog, value: 256)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(makeHandler())
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = channel.localAddress?.port else {
                try? await channel.close()
                throw LocalAPIServerError.notStarted
            }
            lifecycle.withLock { $0 = .running(group: group, channel: channel, port: port) }
            logger.debug("\(name) started", metadata: ["port": "\(port)"])
        } catch {
            lifecycle.withLock { $0 = .idle }
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Closes the listening socket and every open connection. Does nothing when not running.
    func stop() async throws {
        let running = lifecycle.withLock { current -> (MultiThreadedEventLoopGroup, any Channel)? in
            guard case .running(let group, let channel, _) = current else { return nil }
            current = .idle
            return (group, channel)
        }
        guard let (group, channel) = running else { return }
        try? await channel.close()
        try await group.shutdownGracefully()
        logger.debug("\(name) stopped")
    }

    /// True between ``start()`` and ``stop()``.
    var isRunning: Bool {
        if case .running = lifecycle.withLock({ $0 }) { return true }
        return false
    }

    /// The bound port; 0 when not running.
    var port: Int {
        if case .running(_, _, let port) = lifecycle.withLock({ $0 }) { return port }
        return 0
    }
}
