import Foundation
extension OFREPResponse {
    /// The header fields a web integration sends with this answer: ``headers`` and
    /// `Cache-Control: no-store` in place of any other (an evaluation is one visitor's, never to be cached by a proxy).
    public var httpHeaders: [(name: String, value: String)] {
        let own = headers.filter { $0.key.lowercased() != "cache-control" }.sorted { $0.key < $1.key }
        return own.map { (name: $0.key, value: $0.value) } + [(name: "Cache-Control", value: "no-store")]
    }
}

extension OFREPEvaluator {
    /// The OFREP path of a request received at `receivedPath` under any route prefix: the path from
    /// the last ``flagPathPrefix`` on (the flag key as the client encoded it), or `receivedPath`
    /// itself when it has none. Pure.
    public static func evaluatorPath(ofReceivedPath receivedPath: String) -> String {
        guard let range = receivedPath.range(of: flagPathPrefix, options: .backwards) else { return receivedPath }
        return String(receivedPath[range.lowerBound...])
    }
}
