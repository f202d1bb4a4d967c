import ArgumentParser
import Foundation

/// `http-fuzz`: a seeded hostile client against a running `personalized-pages` on 127.0.0.1.
/// Sends ``HostileRequest``s one at a time, each on a fresh connection, until `--requests` were
/// sent or `--seconds` passed (whichever comes first), then prints ONE JSON line of figures
/// (``FuzzFigures``) on stdout. Exits 1 on any 5xx response (run it with healthy upstreams, so
/// none is expected), when the app process (`--pid`) died or stopped listening, or when its peak
/// resident memory passed `--max-rss-mib`.
///
/// Reads the app's visitor-state key (`PP_VISITOR_STATE_KEYS`) and OFREP token
/// (`PP_OFREP_TOKENS`) from the environment when given (``FuzzSecrets``), to send values sealed
/// with the app's own key and requests carrying the right credential.
@main
struct HTTPFuzzCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http-fuzz",
        abstract: "Seeded hostile HTTP client against personalized-pages on loopback; one JSON line of figures.")

    @Option(help: "Port of the app on 127.0.0.1.")
    var port: Int

    @Option(help: "Process id of the app (liveness and peak resident memory from /proc).")
    var pid: Int32

    @Option(help: "Seed of the request sequence.")
    var seed: UInt64 = 1

    @Option(help: "At most this many requests.")
    var requests: Int = 10_000

    @Option(help: "At most this many seconds.")
    var seconds: Int = 60

    @Option(help: "Fail when the app's peak resident memory passes this many MiB.")
    var maxRssMib: Int = 512

    @Option(help: "Largest body, in bytes.")
    var maxBodyBytes: Int = 3 << 20

    @Option(help: "Seconds without a byte of the answer before a request counts as timed out.")
    var readTimeout: Int = 10

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port must be 1...65535") }
        guard requests > 0, seconds > 0, maxRssMib > 0, readTimeout > 0 else { throw ValidationError("counts and bounds must be positive") }
        guard maxBodyBytes >= 100_000 else { throw ValidationError("--max-body-bytes must be at least 100000") }
    }

    func run() throws {
        let probe = ProcessProbe(pid: pid)
        guard probe.isAlive else { throw ValidationError("no process \(pid)") }
        var random = SeededGenerator(seed: seed)
        let secrets = FuzzSecrets(environment: ProcessInfo.processInfo.environment)
        var figures = FuzzFigures(seed: seed)
        figures.sealedWithAppKey = secrets.hasAppKey
        figures.hadOFREPToken = secrets.ofrepToken != nil
        let clock = ContinuousClock()
        let started = clock.now
        let deadline = started + .seconds(seconds)
        var index = 0
        while index < requests, clock.now < deadline {
            let request = HostileRequest.make(&random, maxBodyBytes: maxBodyBytes, secrets: secrets)
            let outcome = RawHTTPExchange.send(
                request.bytes, port: UInt16(port), timeoutSeconds: readTimeout, isHead: request.isHead, halfClose: request.halfClose)
            figures.record(outcome, request: request, index: index)
            index += 1
            if outcome == .refused || index % 100 == 0, !probe.isAlive { break }
            if outcome == .refused { break }  // alive but not listening: nothing more to learn
        }
        let elapsed = (clock.now - started).components
        figures.durationSeconds = ((Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18) * 10).rounded() / 10
        figures.appAlive = probe.isAlive
        figures.peakRssMib = (Double(probe.peakResidentKiB ?? 0) / 1024 * 10).rounded() / 10
        if figures.serverErrors > 0 { figures.failures.append("\(figures.serverErrors) responses with a 5xx status") }
        if !figures.appAlive { figures.failures.append("the app process died") }
        if figures.refused > 0 { figures.failures.append("the app stopped accepting connections") }
        if figures.peakRssMib > Double(maxRssMib) { figures.failures.append("peak RSS above \(maxRssMib) MiB") }
        print(figures.jsonLine())
        if !figures.failures.isEmpty { throw ExitCode(1) }
    }
}
