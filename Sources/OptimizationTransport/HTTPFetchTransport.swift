import AsyncHTTPClient
import Foundation
import HostPlatform
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The production `FetchTransport`: carries the host's Experience, Insights (and CDA) requests
/// over AsyncHTTPClient, built for long-running Linux services.
///
/// **Connections.** One `HTTPClient` per transport, created with it, so connections to the
/// Experience and Insights hosts are pooled and reused across requests (HTTP/1.1 keep-alive, or
/// HTTP/2 over TLS when the server offers it). Create one transport per process (or per client)
/// and keep it; call ``shutdown()`` when done. Redirects are not followed (a 3xx is returned as a
/// response), so the allow-list cannot be escaped through a `Location` header.
///
/// **Allow-list.** Only URLs inside ``allowList`` (the configured Experience and Insights base
/// URLs, compared by scheme, host, port and whole-segment path prefix) are requested;
/// anything else fails with ``HTTPTransportError/urlNotAllowed(_:)`` before any network activity.
///
/// **Timeout.** Every request has a real deadline, ``Configuration/requestTimeout``
/// (default 3000 ms), covering connection, upload, response head and the whole body. On expiry the
/// request is cancelled through AsyncHTTPClient (its connection is closed, nothing keeps running)
/// and `send` throws ``HTTPTransportError/timeout(milliseconds:)``. Timeouts run on real
/// (continuous) time: they bound network I/O, not the engine's injectable clock.
///
/// **Errors.** `send` returns a `FetchResponse` for every HTTP status and throws only
/// ``HTTPTransportError`` values (short descriptions; they become the failure's reason).
///
/// **Cancellation.** Cancelling the calling task (a sender does so when its caller gives up, for
/// example when a service request's Experience budget runs out, and on shutdown) cancels the AsyncHTTPClient request at once, whatever its stage (waiting for a connection,
/// sending, waiting for the head, reading the body): a request cut off mid-exchange has its
/// connection closed, not returned to the pool, and `send` throws ``HTTPTransportError/cancelled``.
///
/// **Threading.** All methods are safe from any thread or task; requests run concurrently.
public final class HTTPFetchTransport: FetchTransport, Sendable {
    /// Settings of a transport. Units are in the names.
    public struct Configuration: Sendable {
        /// The base URLs the core may reach (Experience and Insights), with or without a trailing
        /// slash.
        public var allowedBaseURLs: [String]
        /// Deadline of one request (at least 1 ms). Default 3 s.
        public var requestTimeout: Duration
        /// Largest accepted response body, in bytes. Default 10 MiB.
        public var maximumResponseBodyBytes: Int
        /// Soft limit of concurrent HTTP/1.1 connections per host. Default 8.
        public var maximumConnectionsPerHost: Int
        /// How long an idle pooled connection is kept (at least 1 s). Default 60 s.
        public var idleConnectionTimeout: Duration
        /// Sent as `User-Agent` when the request has none. Default `swift-optimization-linux/<version>`.
        public var userAgent: String?

        /// Creates settings. Timeouts and limits below 1 are raised to 1 when the transport is
        /// created.
        /// - Parameters:
        ///   - allowedBaseURLs: the base URLs the core may reach (Experience and Insights).
        ///   - requestTimeout: deadline of one request; default 3 s.
        ///   - maximumResponseBodyBytes: largest accepted response body, in bytes; default 10 MiB.
        ///   - maximumConnectionsPerHost: soft limit of concurrent HTTP/1.1 connections per host;
        ///     default 8.
        ///   - idleConnectionTimeout: how long an idle pooled connection is kept; default 60 s.
        ///   - userAgent: sent as `User-Agent` when a request has none; nil sends none. Default
        ///     `swift-optimization-linux/<version>`.
        public init(
            allowedBaseURLs: [String],
            requestTimeout: Duration = .seconds(3),
            maximumResponseBodyBytes: Int = 10 * 1024 * 1024,
            maximumConnectionsPerHost: Int = 8,
            idleConnectionTimeout: Duration = .seconds(60),
            userAgent: String? = "\(OptimizationLibrary.name)/\(OptimizationLibrary.version)"
        ) {
            self.allowedBaseURLs = allowedBaseURLs
            self.requestTimeout = requestTimeout
            self.maximumResponseBodyBytes = maximumResponseBodyBytes
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.idleConnectionTimeout = idleConnectionTimeout
            self.userAgent = userAgent
        }
    }

    /// The settings this transport was created with (timeouts and limits clamped to ≥ 1).
    public let configuration: Configuration
    /// The URLs this transport may reach.
    public let allowList: HostAllowList

    private let client: HTTPClient
    private let logger: Logger
    private let isShutDown = Mutex(false)

    /// Creates a transport and its connection pool (no connection is opened until a request).
    /// - Throws: ``HTTPTransportError/invalidBaseURL(_:)`` when a base URL is not an absolute
    ///   `http`/`https` URL with a host.
    public init(
        configuration: Configuration,
        logger: Logger = Logger(label: "Optimization.HTTPFetchTransport", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(HTTPTransportError) {
        var settings = configuration
        settings.requestTimeout = max(.milliseconds(1), settings.requestTimeout)
        settings.maximumResponseBodyBytes = max(1, settings.maximumResponseBodyBytes)
        settings.maximumConnectionsPerHost = max(1, settings.maximumConnectionsPerHost)
        settings.idleConnectionTimeout = max(.seconds(1), settings.idleConnectionTimeout)
        self.allowList = try HostAllowList(baseURLs: settings.allowedBaseURLs)
        self.configuration = settings
        self.logger = logger

        var pool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .milliseconds(Int64(settings.idleConnectionTimeout.wholeMilliseconds)),
            concurrentHTTP1ConnectionsPerHostSoftLimit: settings.maximumConnectionsPerHost)
        // A refused or failed connection fails the request at once; the core's queues own retries.
        pool.retryConnectionEstablishment = false
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(Int64(settings.requestTimeout.wholeMilliseconds))),
            connectionPool: pool,
            decompression: .disabled)
        clientConfiguration.httpVersion = .automatic
        // No span of AsyncHTTPClient's own: it would record each request's full URL, which holds
        // the visitor's profile id. The library traces its requests itself, with the URL's
        // template (see "Observability").
        clientConfiguration.tracing.tracer = nil
        self.client = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration,
            backgroundActivityLogger: logger)
    }

    /// Convenience: a transport for the given Experience and Insights base URLs.
    public convenience init(
        experienceBaseURL: String, insightsBaseURL: String, requestTimeout: Duration = .seconds(3),
        logger: Logger = Logger(label: "Optimization.HTTPFetchTransport", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(HTTPTransportError) {
        try self.init(
            configuration: Configuration(
                allowedBaseURLs: [experienceBaseURL, insightsBaseURL],
                requestTimeout: requestTimeout),
            logger: logger)
    }

    deinit {
        // Dropping a transport without shutdown() must not leak (or trip AsyncHTTPClient's debug
        // precondition): start a non-blocking shutdown that keeps the client alive until done.
        let needsShutdown = isShutDown.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        if needsShutdown { _ = client.shutdown() }
    }

    /// Closes every pooled connection and cancels requests in flight; later `send` calls throw
    /// ``HTTPTransportError/shutDown``. Idempotent.
    public func shutdown() async throws {
        let needsShutdown = isShutDown.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard needsShutdown else { return }
        try await client.shutdown()
    }

    /// Sends `request` and returns its response (any status). Header names of the response are
    /// lower-cased; repeated headers are joined with `", "`. The body is decoded as UTF-8
    /// (invalid sequences replaced).
    /// - Throws: only ``HTTPTransportError``.
    public func send(_ request: FetchRequest) async throws -> FetchResponse {
        guard allowList.allows(request.url) else {
            // The host only (paths may carry profile ids; visitor data is logged at debug only).
            logger.warning(
                "refused a request outside the allowed base URLs",
                metadata: ["host": "\(URL(string: request.url)?.host ?? "?")"])
            logger.debug("refused URL", metadata: ["url": "\(request.url)"])
            throw HTTPTransportError.urlNotAllowed(request.url)
        }
        guard !isShutDown.withLock({ $0 }) else { throw HTTPTransportError.shutDown }

        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headers.count + 1)
        for (name, value) in request.headers {
            headers.add(name: name, value: value)
        }
        if let userAgent = configuration.userAgent, !headers.contains(name: "user-agent") {
            headers.add(name: "User-Agent", value: userAgent)
        }
        let timeoutMilliseconds = configuration.requestTimeout.wholeMilliseconds
        let started = ContinuousClock.now
        do {
            let prepared = try HTTPClient.Request(
                url: request.url, method: HTTPMethod(rawValue: request.method.uppercased()), headers: headers,
                body: request.body.map { .byteBuffer(ByteBuffer(string: $0)) })
            // One deadline for the whole exchange (connection, upload, head and body), armed on
            // the request's event loop: no task, no timer thread, no hop besides the answer's.
            let task = client.execute(
                request: prepared, delegate: ResponseAccumulator(request: prepared, maxBodySize: configuration.maximumResponseBodyBytes),
                deadline: .now() + .milliseconds(Int64(timeoutMilliseconds)), logger: logger)
            let answer = try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
            let response = Self.fetchResponse(answer)
            logger.debug(
                "fetch completed",
                metadata: [
                    "method": "\(request.method)", "url": "\(request.url)", "status": "\(response.status)",
                    "ms": "\(Self.milliseconds(since: started))",
                ])
            return response
        } catch {
            let failure = Task.isCancelled ? HTTPTransportError.cancelled : Self.deliveryError(for: error, timeoutMilliseconds: timeoutMilliseconds)
            logger.debug(
                "fetch failed", metadata: ["method": "\(request.method)", "url": "\(request.url)", "error": "\(failure)"])
            throw failure
        }
    }

    /// The `FetchResponse` of an answer: header names lower-cased, repeated headers joined with
    /// `", "`, the body decoded as UTF-8.
    private static func fetchResponse(_ answer: HTTPClient.Response) -> FetchResponse {
        var headers: [String: String] = [:]
        headers.reserveCapacity(answer.headers.count)
        for (name, value) in answer.headers {
            let key = name.lowercased()
            if let existing = headers[key] {
                headers[key] = existing + ", " + value
            } else {
                headers[key] = value
            }
        }
        return FetchResponse(status: Int(answer.status.code), headers: headers, body: answer.body.map { String(buffer: $0) } ?? "")
    }

    /// Maps whatever AsyncHTTPClient/NIO threw to a ``HTTPTransportError``.
    static func deliveryError(for error: any Error, timeoutMilliseconds: Int) -> HTTPTransportError {
        switch error {
        case let delivery as HTTPTransportError:
            return delivery
        case let client as HTTPClientError:
            switch client {
            case .deadlineExceeded, .readTimeout, .writeTimeout, .getConnectionFromPoolTimeout:
                return .timeout(milliseconds: timeoutMilliseconds)
            case .connectTimeout:
                // The connect timeout is the request timeout: the whole budget went on connecting.
                return .timeout(milliseconds: timeoutMilliseconds)
            case .tlsHandshakeTimeout:
                return .connectionFailed(client.shortDescription.lowercased())
            case .remoteConnectionClosed, .bodyLengthMismatch, .uncleanShutdown:
                return .connectionClosed
            case .cancelled:
                return .cancelled
            case .alreadyShutdown:
                return .shutDown
            case .invalidURL, .emptyHost, .emptyScheme:
                return .invalidURL(client.shortDescription.lowercased())
            default:
                return .transportFailure(client.shortDescription.lowercased())
            }
        case let tooBig as ResponseAccumulator.ResponseTooBigError:
            return .responseTooLarge(limitBytes: tooBig.maxBodySize)
        case is NIOTooManyBytesError:
            return .responseTooLarge(limitBytes: (error as? NIOTooManyBytesError)?.maxBytes ?? 0)
        case is CancellationError:
            return .cancelled
        case let parser as HTTPParserError:
            if case .invalidEOFState = parser { return .connectionClosed }
            return .invalidResponse("\(parser)")
        case let channel as ChannelError:
            switch channel {
            case .ioOnClosedChannel, .eof, .alreadyClosed, .outputClosed, .inputClosed:
                return .connectionClosed
            default:
                return .transportFailure("\(channel)")
            }
        case let io as IOError:
            return .connectionFailed(io.errnoCode == ECONNREFUSED ? "connection refused" : io.description)
        case let connection as NIOConnectionError:
            // Refused (an address answered ECONNREFUSED), or unreachable, or a DNS failure.
            let refused = connection.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
            return .connectionFailed(refused ? "connection refused" : "connection could not be established")
        default:
            // Anything else: keep it short.
            let text = "\(error)"
            return .transportFailure(text.count > 200 ? String(text.prefix(200)) + "…" : text)
        }
    }

    private static func milliseconds(since start: ContinuousClock.Instant) -> Int64 {
        let elapsed = ContinuousClock.now - start
        return elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }
}
