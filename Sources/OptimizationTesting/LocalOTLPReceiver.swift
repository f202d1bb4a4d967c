import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// A local OpenTelemetry collector for tests: an OTLP/HTTP receiver (SwiftNIO, HTTP/1.1) on
/// `127.0.0.1` and an ephemeral port that decodes the spans it is sent and records every export.
///
/// ```swift
/// let receiver = LocalOTLPReceiver()
/// try await receiver.start()
/// // run the exporting process with OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint …
/// let spans = receiver.spans                  // decoded, in arrival order
/// try await receiver.stop()
/// ```
///
/// **Contract.** `POST /v1/traces` with `Content-Type: application/x-protobuf` (OTLP/HTTP's
/// default protocol, `http/protobuf`) and an uncompressed `ExportTraceServiceRequest` body:
/// decoded with ``OTLPTraceExport/spans(fromExportRequest:)``; 200 with an empty
/// `ExportTraceServiceResponse` (full success). A body that does not decode: 400, recorded in
/// ``decodingErrors``. `POST /v1/metrics` (`application/x-protobuf`): recorded as sent
/// (``metricsExports``), 200. Any other content type (OTLP/JSON, `Content-Encoding: gzip`): 415;
/// any other method or path: 404; a body over 16 MiB: 413. Nothing else is answered.
///
/// **Threading and lifecycle.** Every member is safe from any thread. ``start()`` once until
/// ``stop()``; the recordings survive ``stop()``. Waits (``waitForSpans(timeout:where:)``) are
/// woken by the receiver when an export arrives; their timeout is a failure bound only.
public final class LocalOTLPReceiver: Sendable {
    /// The largest export body accepted.
    public static let maxBodyBytes = 16 << 20

    private struct Recordings {
        var spans: [OTLPSpan] = []
        var traceExports: [[UInt8]] = []
        var metricsExports: [[UInt8]] = []
        var decodingErrors: [String] = []
        var refusedRequests: [String] = []
    }

    private let listener: LoopbackHTTPListener
    /// What the receiver recorded; waits see its spans.
    private let recordings = ObservedState(Recordings()) { $0.spans }
    private let logger: Logger

    /// Creates a stopped receiver; ``start()`` binds it.
    /// - Parameter logger: receives the receiver's diagnostics; discards everything by default.
    public init(logger: Logger = Logger(label: "OptimizationTesting.LocalOTLPReceiver", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.logger = logger
        // The connections reach the receiver through a weak reference: the listener the receiver
        // owns does not keep it alive.
        let reference = ReceiverReference()
        listener = LoopbackHTTPListener(name: "local OTLP receiver", logger: logger) { OTLPReceiverHandler(receiver: reference) }
        reference.set(self)
    }

    // MARK: Lifecycle

    /// Binds `127.0.0.1` on an ephemeral port and starts answering.
    /// - Throws: ``LocalAPIServerError/alreadyStarted``, or the bind error.
    public func start() async throws {
        try await listener.start()
    }

    /// Closes the listening socket and every open connection. Does nothing when not running.
    public func stop() async throws {
        try await listener.stop()
    }

    /// The bound port; 0 when not running.
    public var port: Int { listener.port }

    /// `http://127.0.0.1:<port>` (no trailing slash): the value for `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// (exporters append `/v1/traces` and `/v1/metrics`).
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    // MARK: Recordings

    /// Every span decoded from every trace export, in arrival order.
    public var spans: [OTLPSpan] { recordings.withLock { $0.spans } }

    /// The body of every trace export that decoded, in arrival order.
    public var traceExports: [[UInt8]] { recordings.withLock { $0.traceExports } }

    /// The body of every metrics export (`POST /v1/metrics`), as sent, in arrival order; read
    /// metric names with ``OTLPTraceExport/metricNames(fromExportRequest:)``.
    public var metricsExports: [[UInt8]] { recordings.withLock { $0.metricsExports } }

    /// Why trace exports that did not decode were refused (400), in arrival order.
    public var decodingErrors: [String] { recordings.withLock { $0.decodingErrors } }

    /// `METHOD path (content type)` of every request answered 404, 413 or 415, in arrival order.
    public var refusedRequests: [String] { recordings.withLock { $0.refusedRequests } }

    /// Waits until the spans received so far satisfy `condition` and returns them.
    /// - Throws: ``LocalAPIServerError/waitTimedOut(_:)`` after `timeout` (a failure bound, not a
    ///   wait: the receiver wakes the waiter as soon as an export satisfies it);
    ///   `CancellationError` when the waiting task is cancelled.
    @discardableResult
    public func waitForSpans(
        timeout: Duration = defaultHangBound, where condition: @escaping @Sendable ([OTLPSpan]) -> Bool
    ) async throws -> [OTLPSpan] {
        try await recordings.wait(timeout: timeout, condition: condition) { spans in
            "OTLP spans not as expected within \(timeout); received: \(spans.map(\.name))"
        }
    }

    // MARK: Answering (the channel handler's side)

    /// The answer to one complete request: records it and returns the status.
    fileprivate func receive(method: HTTPMethod, uri: String, contentType: String?, contentEncoding: String?, body: [UInt8]) -> HTTPResponseStatus {
        let path = uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? uri
        let isProtobuf = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() == "application/x-protobuf"
        let identity = contentEncoding == nil || contentEncoding?.lowercased() == "identity"
        let status: HTTPResponseStatus
        switch (method, path) {
        case (.POST, "/v1/traces") where isProtobuf && identity:
            do {
                let spans = try OTLPTraceExport.spans(fromExportRequest: body)
                recordings.update { recordings in
                    recordings.spans += spans
                    recordings.traceExports.append(body)
                }
                logger.debug("trace export received", metadata: ["spans": "\(spans.count)"])
                return .ok
            } catch {
                recordings.withLock { $0.decodingErrors.append("\(error)") }
                return .badRequest
            }
        case (.POST, "/v1/metrics") where isProtobuf && identity:
            recordings.withLock { $0.metricsExports.append(body) }
            return .ok
        case (.POST, "/v1/traces"), (.POST, "/v1/metrics"):
            status = .unsupportedMediaType
        default:
            status = .notFound
        }
        refused("\(method.rawValue) \(path) (\(contentType ?? "no content type"))")
        return status
    }

    fileprivate func refused(_ request: String) {
        recordings.withLock { $0.refusedRequests.append(request) }
    }
}

/// One connection's HTTP/1.1 requests to a ``LocalOTLPReceiver``: collects each body (at most
/// ``LocalOTLPReceiver/maxBodyBytes``) and answers when it is complete. Runs on its channel's
/// event loop only.
private final class OTLPReceiverHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let receiver: ReceiverReference
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var tooLarge = false

    init(receiver: ReceiverReference) {
        self.receiver = receiver
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
            tooLarge = false
        case .body(var chunk):
            guard !tooLarge else { return }
            if body.count + chunk.readableBytes > LocalOTLPReceiver.maxBodyBytes {
                tooLarge = true
                body = []
            } else {
                body += chunk.readBytes(length: chunk.readableBytes) ?? []
            }
        case .end:
            guard let head else { return }
            self.head = nil
            let status: HTTPResponseStatus
            if let receiver = receiver.receiver, tooLarge {
                receiver.refused("\(head.method.rawValue) \(head.uri) (over \(LocalOTLPReceiver.maxBodyBytes) bytes)")
                status = .payloadTooLarge
            } else if let receiver = receiver.receiver {
                status = receiver.receive(
                    method: head.method, uri: head.uri, contentType: head.headers.first(name: "content-type"),
                    contentEncoding: head.headers.first(name: "content-encoding"), body: body)
            } else {
                status = .serviceUnavailable
            }
            body = []
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/x-protobuf")
            headers.add(name: "Content-Length", value: "0")
            if !head.isKeepAlive || tooLarge { headers.add(name: "Connection", value: "close") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
            let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            if !head.isKeepAlive || tooLarge {
                done.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            }
        }
    }
}

/// The receiver a connection's handler answers for, held weakly (nil once the receiver is gone).
private final class ReceiverReference: Sendable {
    private struct Weak {
        weak var receiver: LocalOTLPReceiver?
    }

    private let reference = Mutex(Weak())

    var receiver: LocalOTLPReceiver? { reference.withLock { $0.receiver } }

    func set(_ receiver: LocalOTLPReceiver) {
        reference.withLock { $0.receiver = receiver }
    }
}
