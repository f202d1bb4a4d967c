import Foundation
import JavaScriptHost
import Logging
import Testing

@Suite("Host bindings")
struct HostBindingTests {
    @Test func timersRunOnTheInjectedClockInDueOrder() throws {
        let clock = ManualClock()
        let engine = try JavaScriptEngine(configuration: .init(clock: clock))
        try engine.evaluate("""
            globalThis.fired = [];
            globalThis.__timerFired = (id) => fired.push([id, __nativeNow()]);
            __nativeSetTimeout(1, 100); __nativeSetTimeout(2, 50); __nativeSetTimeout(3, 100);
            __nativeSetTimeout(4, 10); __nativeClearTimeout(4);
            """)
        #expect(engine.pendingTimerCount == 3)
        clock.advance(by: .milliseconds(99))
        let start = clock.now() - 99
        #expect(try engine.evaluate("fired") == .json("[[2,\(Int(start + 50))]]"))
        clock.advance(by: .milliseconds(1))
        #expect(try engine.evaluate("fired.map(f => f[0])") == .json("[2,1,3]"))
        #expect(engine.pendingTimerCount == 0)
    }

    @Test func nowAndUUIDComeFromTheHost() throws {
        let clock = ManualClock(start: 1_000)
        let engine = try JavaScriptEngine(configuration: .init(clock: clock))
        #expect(try engine.evaluate("__nativeNow()") == .number(1_000))
        let uuid = try engine.evaluate("__nativeRandomUUID()").stringValue ?? ""
        #expect(uuid.range(of: "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
                           options: .regularExpression) != nil)
    }

    @Test func uuidsComeInBatchesOfDistinctVersion4Ids() throws {
        let engine = try JavaScriptEngine(configuration: .init(clock: ManualClock()))
        let batch = try engine.evaluate("__nativeRandomUUID(32)").stringValue ?? ""
        #expect(batch.count == 32 * 36)
        let ids = stride(from: 0, to: batch.count, by: 36).map { offset -> String in
            let start = batch.index(batch.startIndex, offsetBy: offset)
            return String(batch[start..<batch.index(start, offsetBy: 36)])
        }
        #expect(Set(ids).count == 32)
        #expect(ids.allSatisfy {
            $0.range(of: "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", options: .regularExpression) != nil
        })
        // At most the documented batch; an injected generator answers one id per call.
        #expect(try engine.evaluate("__nativeRandomUUID(100000)").stringValue?.count == HostBinding.maximumUUIDBatch * 36)
        let injected = try JavaScriptEngine(configuration: .init(clock: ManualClock(), randomUUID: { "fixed-id" }))
        #expect(try injected.evaluate("__nativeRandomUUID(32)") == .string("fixed-id"))
    }

    @Test func closingTheEngineCancelsPendingTimers() throws {
        let clock = ManualClock()
        let engine = try JavaScriptEngine(configuration: .init(clock: clock))
        try engine.evaluate("globalThis.__timerFired = () => { throw new Error('must not fire'); }; __nativeSetTimeout(7, 10);")
        engine.close()
        #expect(clock.pendingTimerCount == 0)
        clock.advance(by: .milliseconds(100))
    }

    @Test func fetchWithoutTransportFailsAsynchronouslyWithAClearMessage() async throws {
        let engine = try JavaScriptEngine()
        try engine.evaluate("""
            globalThis.results = [];
            globalThis.__fetchComplete = (id, status, headers, body, error) => results.push({id, status, error});
            __nativeFetch('https://example.invalid/', 'GET', '{}', null, 9);
            globalThis.syncLength = results.length;
            """)
        #expect(try engine.evaluate("syncLength") == .number(0))
        try await waitUntil { engine.pendingFetchCount == 0 }
        #expect(try engine.evaluate("results") == .json(#"[{"id":9,"status":0,"error":"no transport configured"}]"#))
    }

    @Test func fetchGoesThroughTheConfiguredTransport() async throws {
        let transport = RecordingTransport()
        let engine = try JavaScriptEngine(configuration: .init(transport: transport))
        try engine.evaluate("""
            globalThis.results = [];
            globalThis.__fetchComplete = (id, status, headers, body, error) => results.push({id, status, body, error, h: JSON.parse(headers)});
            __nativeFetch('https://api.test/v1', 'POST', '{"Content-Type":"text/plain"}', '{"a":1}', 3);
            """)
        try await waitUntil { engine.pendingFetchCount == 0 }
        #expect(transport.requests == [FetchRequest(url: "https://api.test/v1", method: "POST",
                                                    headers: ["Content-Type": "text/plain"], body: #"{"a":1}"#)])
        #expect(try engine.evaluate("results") == .json(#"[{"id":3,"status":201,"body":"ok","error":"","h":{"x-test":"1"}}]"#))
    }

    @Test func cancellingAFetchStopsItsTransportCallAndDeliversNothing() async throws {
        let transport = HangingTransport()
        let engine = try JavaScriptEngine(configuration: .init(transport: transport))
        defer { engine.close() }
        try engine.evaluate("""
            globalThis.results = [];
            globalThis.__fetchComplete = (id) => results.push(id);
            __nativeFetch('https://api.test/kept', 'GET', '{}', null, 1);
            __nativeFetch('https://api.test/cancelled', 'GET', '{}', null, 2);
            """)
        try await waitUntil { transport.started.count == 2 }
        #expect(engine.pendingFetchCount == 2 && engine.runningFetchCount == 2)

        // Twice, and an id that does not exist: both ignored.
        try engine.evaluate("__nativeCancelFetch(2); __nativeCancelFetch(2); __nativeCancelFetch(99);")
        #expect(engine.pendingFetchCount == 1, "JavaScript no longer waits for it")
        try await waitUntil { engine.runningFetchCount == 1 }
        #expect(transport.cancelled == ["https://api.test/cancelled"], "the transport call itself was cancelled")
        #expect(try engine.evaluate("results") == .json("[]"), "nothing is delivered for a cancelled fetch")
    }

    @Test func closingTheEngineCancelsEveryFetchInFlight() async throws {
        let transport = HangingTransport()
        let engine = try JavaScriptEngine(configuration: .init(transport: transport))
        try engine.evaluate("""
            __nativeFetch('https://api.test/a', 'GET', '{}', null, 1);
            __nativeFetch('https://api.test/b', 'POST', '{}', 'x', 2);
            """)
        try await waitUntil { transport.started.count == 2 }
        engine.close()
        #expect(engine.pendingFetchCount == 0)
        try await waitUntil { engine.runningFetchCount == 0 }
        #expect(Set(transport.cancelled) == ["https://api.test/a", "https://api.test/b"])
    }

    @Test func scriptLogsReachTheInjectedLoggerAtTheMappedLevel() throws {
        let records = LogRecords()
        let logger = Logger(label: "test") { _ in RecordingLogHandler(records: records) }
        let engine = try JavaScriptEngine(configuration: .init(logger: logger))
        try engine.evaluate("__nativeLog('warn', 'careful'); __nativeLog('debug', 'details');")
        #expect(records.all.map(\.level) == [.warning, .debug])
        #expect(records.all.map(\.message) == ["careful", "details"])
    }

    private func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        // Waits for a loopback-free, in-process task to finish (normally well under 10 ms). The
        // bound only catches a hang, so it is longer than a whole run of the suite: every test
        // starts at once on a cooperative pool as wide as the machine's cores, and the task this
        // waits for can be queued behind the work of every other test (over a minute on a busy
        // 2-core machine).
        let deadline = ContinuousClock.now + .seconds(600)
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(condition())
    }
}

final class RecordingTransport: FetchTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [FetchRequest] = []
    var requests: [FetchRequest] { lock.withLock { recorded } }

    func send(_ request: FetchRequest) async throws -> FetchResponse {
        lock.withLock { recorded.append(request) }
        return FetchResponse(status: 201, headers: ["x-test": "1"], body: "ok")
    }
}

/// Never answers: each `send` returns only when its task is cancelled (then throws
/// `CancellationError`), and records the URLs it started and the ones cancelled.
final class HangingTransport: FetchTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var startedURLs: [String] = []
    private var cancelledURLs: [String] = []
    var started: [String] { lock.withLock { startedURLs } }
    var cancelled: [String] { lock.withLock { cancelledURLs } }

    func send(_ request: FetchRequest) async throws -> FetchResponse {
        lock.withLock { startedURLs.append(request.url) }
        let (never, keepOpen) = AsyncStream<Never>.makeStream()
        // An AsyncStream's iteration ends when the iterating task is cancelled, and not before:
        // nothing is ever yielded and the continuation stays alive below.
        for await _ in never {}
        keepOpen.finish()
        lock.withLock { cancelledURLs.append(request.url) }
        throw CancellationError()
    }
}

final class LogRecords: @unchecked Sendable {
    struct Record { let level: Logger.Level; let message: String }
    private let lock = NSLock()
    private var records: [Record] = []
    var all: [Record] { lock.withLock { records } }
    func append(_ record: Record) { lock.withLock { records.append(record) } }
}

struct RecordingLogHandler: LogHandler {
    let records: LogRecords
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        records.append(.init(level: event.level, message: "\(event.message)"))
    }
}
