import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A raw TCP connection to `127.0.0.1` that sends some bytes (half a request line, say) and then
/// only reads: what a slowloris client holds open.
///
/// ``readUntilClosed()`` blocks a thread of its own (never one of the cooperative pool) in
/// `recv` until the server closes or resets the connection, and is cancellable: cancelling shuts
/// the socket down, which ends the read (the caller's hang bound then reports the hang).
final class HalfOpenConnection: Sendable {
    /// How a read until the end went.
    enum End: Equatable, Sendable {
        /// The server closed the connection (end of stream), after sending `bytes`.
        case closed(bytes: Int)
        /// The server reset the connection.
        case reset
    }

    private let socket: Int32

    /// Connects to `127.0.0.1:port` and writes `bytes`.
    /// - Throws: ``HarnessError`` when the connection or the write fails.
    init(port: Int, sending bytes: [UInt8]) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw HarnessError("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw HarnessError("connect to 127.0.0.1:\(port) failed: errno \(errno)")
        }
        let written = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard written == bytes.count else {
            close(socket)
            throw HarnessError("wrote \(written) of \(bytes.count) bytes")
        }
        self.socket = socket
    }

    deinit { close(socket) }

    /// Reads (discarding) until the server closes or resets the connection.
    func readUntilClosed() async -> End {
        let socket = self.socket
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    var total = 0
                    while true {
                        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                        if count > 0 { total += count; continue }
                        if count < 0, errno == EINTR { continue }
                        continuation.resume(returning: count == 0 ? .closed(bytes: total) : .reset)
                        return
                    }
                }
                thread.start()
            }
        } onCancel: {
            shutdown(socket, Int32(SHUT_RDWR))
        }
    }
}
