import Foundation

/// The figures of one fuzz run, printed as one JSON line.
struct FuzzFigures: Encodable {
    var seed: UInt64
    var requests = 0
    /// Status code → count.
    var statuses: [String: Int] = [:]
    /// Request kind (`generic`, `replay`, `ofrep`) → status code (or `closed`, `timeout`) → count:
    /// which answers the targeted requests reached.
    var statusesByKind: [String: [String: Int]] = [:]
    /// Whether the fuzzer held the app's visitor-state key (insider seals) and OFREP token.
    var sealedWithAppKey = false
    var hadOFREPToken = false
    /// Connections the server closed or reset before a status line (expected for malformed requests).
    var closedWithoutResponse = 0
    /// Requests without a status line within the read timeout.
    var timeouts = 0
    /// Connections refused (the app was not listening).
    var refused = 0
    /// Responses with a 5xx status.
    var serverErrors = 0
    /// `METHOD route status` of the first 5xx responses (at most 50), and the seed's request index.
    var serverErrorRoutes: [String] = []
    /// Peak resident memory of the app process (`VmHWM`), in MiB, at the end (or when it died).
    var peakRssMib = 0.0
    var appAlive = true
    var durationSeconds = 0.0
    /// Why the run failed; empty when it passed.
    var failures: [String] = []

    mutating func record(_ outcome: ExchangeOutcome, request: HostileRequest, index: Int) {
        requests += 1
        let outcomeName: String = switch outcome {
        case .status(let code): String(code)
        case .closedWithoutResponse: "closed"
        case .timedOut: "timeout"
        case .refused: "refused"
        }
        statusesByKind[request.kind, default: [:]][outcomeName, default: 0] += 1
        switch outcome {
        case .status(let code):
            statuses[String(code), default: 0] += 1
            if code >= 500 {
                serverErrors += 1
                if serverErrorRoutes.count < 50 { serverErrorRoutes.append("#\(index) \(request.method) \(request.route) \(code)") }
            }
        case .closedWithoutResponse: closedWithoutResponse += 1
        case .timedOut: timeouts += 1
        case .refused: refused += 1
        }
    }

    func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
