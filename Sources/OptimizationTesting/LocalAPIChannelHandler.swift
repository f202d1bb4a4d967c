import NIOCore
import NIOHTTP1

/// One per connection, on that connection's event loop (after NIO's HTTP/1.1 server pipeline,
/// which serialises pipelined requests). Collects a request, records it, and answers as scripted.
final class LocalAPIChannelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: LocalAPIServerState
    private var connectionID = 0
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    private var isActive = false
    private var pendingDelays: [Int: Scheduled<Void>] = [:]
    private var nextDelayID = 0

    init(state: LocalAPIServerState) {
        self.state = state
    }

    func channelActive(context: ChannelHandlerContext) {
        isActive = true
        connectionID = state.connectionOpened()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if isActive {
            isActive = false
            state.connectionClosed(id: connectionID)
        }
        cancelDelays()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelDelays()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            body.clear()
        case .body(var part):
            body.writeBuffer(&part)
        case .end:
            guard let requestHead = head else { return }
            head = nil
            let text = String(buffer: body)
            body.clear()
            let (request, script) = state.receive(
                connectionID: connectionID, method: requestHead.method.rawValue, uri: requestHead.uri,
                headers: requestHead.headers.map { ($0.name, $0.value) }, body: text)
            perform(script, request: request, head: requestHead, context: context)
        }
    }

    // MARK: Answering

    private func perform(
        _ script: ScriptedResponse, request: RecordedRequest, head: HTTPRequestHead, context: ChannelHandlerContext
    ) {
        guard isActive else { return }
        switch script {
        case .delay, .hang, .stalledBody:
            break
        case .standard, .status, .retryAfter, .truncatedBody, .dropConnection:
            state.answered(request)
        }
        switch script {
        case .standard:
            let planned = state.standardResponse(for: request)
            write(status: planned.status, headers: planned.headers, body: planned.body, head: head, context: context)
        case .status(let status, let body, let headers):
            var pairs = headers.map { ($0.key, $0.value) }
            if !body.isEmpty, !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
                pairs.append(("content-type", "application/json; charset=utf-8"))
            }
            write(status: status, headers: pairs, body: body, head: head, context: context)
        case .retryAfter(let seconds, let status):
            let reason = HTTPResponseStatus(statusCode: status).reasonPhrase
            write(
                status: status,
                headers: [("retry-after", "\(seconds)"), ("content-type", "application/json; charset=utf-8")],
                body: #"{"message":"\#(reason)","data":{},"error":{"code":"ERR_RATE_LIMITED"}}"#,
                head: head, context: context)
        case .delay(let duration, let then):
            nextDelayID += 1
            let delayID = nextDelayID
            pendingDelays[delayID] = context.eventLoop.assumeIsolated().scheduleTask(
                in: .milliseconds(Int64(max(0, duration.wholeMilliseconds)))
            ) {
                self.pendingDelays.removeValue(forKey: delayID)
                self.perform(then, request: request, head: head, context: context)
            }
        case .truncatedBody:
            writePartialBody(head: head, context: context)
                .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case .stalledBody:
            _ = writePartialBody(head: head, context: context)
        case .dropConnection:
            context.close(promise: nil)
        case .hang:
            // No answer and nothing scheduled: the connection stays open until the client
            // closes it (channelInactive records when) or the server stops.
            break
        }
    }

    /// A 200 head promising 4 KiB more than the few body bytes that follow.
    private func writePartialBody(head: HTTPRequestHead, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let partial = #"{"data":{"profile":{"id":"trunc"#
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/json; charset=utf-8")
        headers.add(name: "content-length", value: "\(partial.utf8.count + 4096)")
        headers.add(name: "access-control-allow-origin", value: "*")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
        return context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: partial)))))
    }

    private func write(
        status: Int, headers: [(String, String)], body: String, head: HTTPRequestHead, context: ChannelHandlerContext
    ) {
        var responseHeaders = HTTPHeaders()
        for (name, value) in headers { responseHeaders.add(name: name, value: value) }
        if !responseHeaders.contains(name: "access-control-allow-origin") {
            responseHeaders.add(name: "access-control-allow-origin", value: "*")
        }
        let allowsBody = !(100..<200).contains(status) && status != 204 && status != 304
        if allowsBody {
            responseHeaders.replaceOrAdd(name: "content-length", value: "\(body.utf8.count)")
        } else {
            responseHeaders.remove(name: "content-length")
        }
        let keepAlive = head.isKeepAlive
        if !keepAlive { responseHeaders.replaceOrAdd(name: "connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: HTTPResponseStatus(statusCode: status), headers: responseHeaders))),
            promise: nil)
        if allowsBody, !body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            done.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    private func cancelDelays() {
        for scheduled in pendingDelays.values { scheduled.cancel() }
        pendingDelays.removeAll()
    }
}
