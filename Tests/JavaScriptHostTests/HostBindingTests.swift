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

    @Test func scriptsGetNoHTTPBinding() throws {
        let engine = try JavaScriptEngine()
        #expect(HostBinding.allCases.map(\.rawValue) == ["__nativeLog", "__nativeNow", "__nativeRandomUUID", "__nativeSetTimeout", "__nativeClearTimeout"])
        for binding in HostBinding.allCases {
            #expect(try engine.evaluate("typeof \(binding.rawValue)") == .string("function"), "\(binding.rawValue)")
        }
        #expect(try engine.evaluate("typeof __nativeFetch + typeof __nativeCancelFetch") == .string("undefinedundefined"))
    }

    @Test func scriptLogsReachTheInjectedLoggerAtTheMappedLevel() throws {
        let records = LogRecords()
        let logger = Logger(label: "test") { _ in RecordingLogHandler(records: records) }
        let engine = try JavaScriptEngine(configuration: .init(logger: logger))
        try engine.evaluate("__nativeLog('warn', 'careful'); __nativeLog('debug', 'details');")
        #expect(records.all.map(\.level) == [.warning, .debug])
        #expect(records.all.map(\.message) == ["careful", "details"])
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
