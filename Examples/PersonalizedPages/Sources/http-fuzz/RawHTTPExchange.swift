import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What became of one raw request.
enum ExchangeOutcome: Equatable {
    /// A response whose status line was read.
    case status(Int)
    /// The connection could not be opened (the app is not listening).
    case refused
    /// The server closed or reset the connection before a status line.
    case closedWithoutResponse
    /// No status line within the read timeout.
    case timedOut
}

/// One request written as raw bytes on a fresh TCP connection to 127.0.0.1, so that malformed
/// requests reach the server as they are; the answer is read until its status line and declared
/// body arrived (its head only for `HEAD`), the server closed, or `timeoutSeconds` passed without
/// a byte. Blocking, one connection at a time. `halfClose` ends the sending side after the request
/// (so a server waiting for a body that never comes sees the end).
enum RawHTTPExchange {
    static func send(_ bytes: [UInt8], port: UInt16, timeoutSeconds: Int, isHead: Bool, halfClose: Bool) -> ExchangeOutcome {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return .refused }
        defer { close(socket) }
        var time = timeval(tv_sec: max(timeoutSeconds, 1), tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return .refused }
        // The server may answer (and close) before it read everything: a failed write is not an error.
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { break }
            offset += written
        }
        if halfClose { shutdown(socket, Int32(SHUT_WR)) }
        return readResponse(socket, isHead: isHead)
    }

    private static func readResponse(_ socket: Int32, isHead: Bool) -> ExchangeOutcome {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var status: Int?
        var expectedTotal: Int?
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { return status.map(ExchangeOutcome.status) ?? .timedOut }
                return status.map(ExchangeOutcome.status) ?? .closedWithoutResponse
            }
            if count == 0 { return status.map(ExchangeOutcome.status) ?? .closedWithoutResponse }
            received += buffer[0..<count]
            if status == nil, let head = headEnd(received) {
                let text = String(decoding: received[0..<head], as: UTF8.self)
                let parts = text.split(separator: " ", maxSplits: 2)
                guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let code = Int(parts[1]) else { return .closedWithoutResponse }
                status = code
                if isHead || code == 204 || code == 304 || (100..<200).contains(code) { return .status(code) }
                let length = text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
                if let length { expectedTotal = head + 4 + length }
            }
            if let expectedTotal, received.count >= expectedTotal { return .status(status ?? 0) }
        }
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}
