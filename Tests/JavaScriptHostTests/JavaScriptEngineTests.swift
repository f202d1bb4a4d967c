import Foundation
import Synchronization
import JavaScriptHost
import Testing

@Suite("JavaScriptEngine")
struct JavaScriptEngineTests {
    @Test func evaluatesScriptsAndReturnsJSONCompatibleValues() throws {
        let engine = try JavaScriptEngine()
        #expect(try engine.evaluate("1 + 2") == .number(3))
        #expect(try engine.evaluate("'a' + 'b'") == .string("ab"))
        #expect(try engine.evaluate("null") == .null)
        #expect(try engine.evaluate("undefined") == .undefined)
        #expect(try engine.evaluate("true") == .bool(true))
        #expect(try engine.evaluate("({a: [1, {b: 'c'}]})") == .json(#"{"a":[1,{"b":"c"}]}"#))
    }

    @Test func theEntryHookRunsBeforeEveryOutermostEntryAndNotInsideItsOwnCalls() throws {
        let clock = ManualClock()
        let engine = try JavaScriptEngine(configuration: .init(clock: clock))
        try engine.evaluate("globalThis.log = []; globalThis.note = function (x) { log.push(x); return log.length; };")
        let hookRuns = Mutex(0)
        engine.setEntryHook {
            hookRuns.withLock { $0 += 1 }
            // The hook's own call into the engine does not run the hook again.
            _ = try? engine.call("note", .string("hook"))
        }
        try engine.evaluate("note('script')")
        #expect(try engine.call("note", .string("call")) == .number(4))
        try engine.evaluate("globalThis.__timerFired = function () { note('timer'); }; __nativeSetTimeout(1, 5)")
        clock.advance(by: .milliseconds(5))
        #expect(try engine.evaluate("JSON.stringify(log)") == .string(#"["hook","script","hook","call","hook","hook","timer","hook"]"#))
        #expect(hookRuns.withLock { $0 } == 5)
        engine.setEntryHook(nil)
        _ = try engine.call("note", .string("after"))
        #expect(hookRuns.withLock { $0 } == 5)
    }

    @Test func hostDrawnIdsComeFromTheConfiguredSource() throws {
        let counter = Mutex(0)
        let engine = try JavaScriptEngine(configuration: .init(randomUUID: {
            "id-" + String(counter.withLock { $0 += 1; return $0 })
        }))
        #expect(engine.randomUUID() == "id-1")
        #expect(try engine.evaluate("__nativeRandomUUID()") == .string("id-2"))
        let own = try JavaScriptEngine()
        let id = own.randomUUID()
        #expect(id.count == 36 && id != own.randomUUID())
    }

    @Test func callsFunctionsWithJSONArgumentsAndThisBinding() throws {
        let engine = try JavaScriptEngine()
        try engine.evaluate("globalThis.api = { factor: 3, scale(o, n) { return {v: o.v * n * this.factor}; } };")
        let result = try engine.call("api.scale", .json(#"{"v":2}"#), .number(5))
        #expect(result == .json(#"{"v":30}"#))
        let handle = try engine.function("api.scale")
        #expect(try handle.call(.json(#"{"v":1}"#), .number(1)) == .json(#"{"v":3}"#))
    }

    @Test func javaScriptExceptionsBecomeTypedErrorsWithLocation() throws {
        let engine = try JavaScriptEngine()
        let script = "function f() {\n  throw new TypeError('bad input');\n}\nf();"
        do {
            try engine.evaluate(script, sourceURL: "core/thing.js")
            Issue.record("expected a throw")
        } catch JavaScriptError.exception(let exception) {
            #expect(exception.name == "TypeError")
            #expect(exception.message == "bad input")
            #expect(exception.sourceURL == "core/thing.js")
            #expect(exception.line == 2)
            #expect(exception.description.contains("core/thing.js:2"))
        }
        // The engine stays usable, and non-Error throws still carry their text.
        #expect(throws: JavaScriptError.exception(JavaScriptException(message: "plain"))) {
            try engine.evaluate("throw 'plain'")
        }
        #expect(try engine.evaluate("40 + 2") == .number(42))
    }

    @Test func aThrownObjectWithHostileNumbersBecomesAnErrorWithoutTrapping() throws {
        let engine = try JavaScriptEngine()
        for (line, expected) in [("1e300", Int.max), ("-1e300", Int.min), ("NaN", nil), ("Infinity", nil), ("12.9", 12)] as [(String, Int?)] {
            do {
                try engine.evaluate("throw { message: 'hostile', line: \(line), column: \(line) }")
                Issue.record("expected a throw")
            } catch JavaScriptError.exception(let exception) {
                #expect(exception.message == "hostile")
                #expect(exception.line == expected, "line \(line)")
                #expect(exception.column == expected, "column \(line)")
            }
        }
    }

    @Test func javaScriptNumbersBecomeIntegersClampedNeverTrapping() {
        #expect(Int(clampingJavaScriptNumber: 9.3e18) == Int.max)
        #expect(Int(clampingJavaScriptNumber: -9.3e18) == Int.min)
        #expect(Int(clampingJavaScriptNumber: 0x1p63) == Int.max)
        #expect(Int(clampingJavaScriptNumber: -0x1p63) == Int.min)
        #expect(Int(clampingJavaScriptNumber: -2.9) == -2)
        #expect(Int(clampingJavaScriptNumber: .nan) == nil)
        #expect(Int(clampingJavaScriptNumber: -.infinity) == nil)
    }

    @Test func syntaxErrorsAreReportedWithoutRunning() throws {
        let engine = try JavaScriptEngine()
        #expect(throws: JavaScriptError.self) { try engine.checkSyntax("let = ;", sourceURL: "broken.js") }
        try engine.checkSyntax("globalThis.x = 1")
        #expect(try engine.evaluate("typeof x") == .string("undefined"))
    }

    @Test func invalidJSONArgumentIsATypedError() throws {
        let engine = try JavaScriptEngine()
        try engine.evaluate("globalThis.id = (x) => x;")
        #expect(throws: JavaScriptError.invalidJSONArgument("{nope")) { try engine.call("id", .json("{nope")) }
    }

    @Test func callingSomethingThatIsNotAFunctionFails() throws {
        let engine = try JavaScriptEngine()
        try engine.evaluate("globalThis.obj = {n: 1}")
        #expect(throws: JavaScriptError.notAFunction("obj.n")) { try engine.call("obj.n") }
        #expect(throws: JavaScriptError.notAFunction("missing.path")) { try engine.call("missing.path") }
    }

    @Test func aCallFindsTheFunctionThePathNamesNowEvenAfterItWasReplaced() throws {
        let engine = try JavaScriptEngine()
        try engine.evaluate("globalThis.api = {answer: function () { return this.tag; }, tag: 'first'}")
        #expect(try engine.call("api.answer") == .string("first"))
        try engine.evaluate("api.answer = function () { return 'replaced'; }")
        #expect(try engine.call("api.answer") == .string("replaced"))
        try engine.evaluate("globalThis.api = {answer: function () { return this.tag; }, tag: 'second object'}")
        #expect(try engine.call("api.answer") == .string("second object"), "`this` is the object the path names now")
        try engine.evaluate("delete globalThis.api")
        #expect(throws: JavaScriptError.notAFunction("api.answer")) { try engine.call("api.answer") }
        // More paths than the engine keeps names for still resolve, each call.
        try engine.evaluate("for (var i = 0; i < 300; i++) globalThis['f' + i] = new Function('return ' + i);")
        for round in 0..<2 {
            for index in [0, 255, 256, 299] {
                #expect(try engine.call("f\(index)") == .number(Double(index)), "round \(round)")
            }
        }
        for index in 0..<300 { _ = try engine.call("f\(index)") }
        #expect(try engine.call("f299") == .number(299))
        #expect(throws: JavaScriptError.notAFunction("a..b")) { try engine.call("a..b") }
    }

    @Test func cyclicResultIsAnErrorNotACrash() throws {
        let engine = try JavaScriptEngine()
        #expect(throws: JavaScriptError.self) { try engine.evaluate("const a = {}; a.self = a; a") }
    }

    @Test func runawayScriptIsTerminatedByTheWatchdogAndTheEngineSurvives() throws {
        let engine = try JavaScriptEngine(configuration: .init(executionTimeLimit: .milliseconds(200)))
        let started = Date()
        #expect(throws: JavaScriptError.executionTimeLimitExceeded(after: .milliseconds(200))) {
            try engine.evaluate("while (true) {}")
        }
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(try engine.evaluate("'still alive'") == .string("still alive"))
    }

    @Test func unicodeAndEmbeddedNULSurviveBothDirections() throws {
        let engine = try JavaScriptEngine()
        try engine.evaluate("globalThis.echo = (s) => s; globalThis.wrap = (s) => ({s});")
        let text = "line\u{2028}sep\u{2029}para \u{0000} nul 😀 \"quoted\" \\ back"
        #expect(try engine.call("echo", .string(text)) == .string(text))
        #expect(try engine.evaluate("'a\\u0000b'") == .string("a\u{0000}b"))
        guard case .json(let json) = try engine.call("wrap", .string(text)) else {
            Issue.record("expected JSON")
            return
        }
        let decoded = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String]
        #expect(decoded?["s"] == text)
    }

    @Test func nativeFunctionsAreCallableWithCallAndApplyAndCanThrow() throws {
        let engine = try JavaScriptEngine()
        try engine.registerFunction("add") { arguments in
            .number(arguments.compactMap(\.numberValue).reduce(0, +))
        }
        try engine.registerFunction("fail") { _ in throw HostBindingError.invalidArguments("nothing") }
        #expect(try engine.evaluate("add(1, 2, 3)") == .number(6))
        #expect(try engine.evaluate("add.call(null, 4, 5)") == .number(9))
        #expect(try engine.evaluate("add.apply(null, [1, 1])") == .number(2))
        #expect(try engine.evaluate("try { fail(); 'no' } catch (e) { e instanceof Error && e.message }")
            == .string("fail: invalid arguments, expected nothing"))
    }

    @Test func closedEngineRefusesWork() throws {
        let engine = try JavaScriptEngine()
        try engine.evaluate("globalThis.f = () => 1")
        let handle = try engine.function("f")
        engine.close()
        engine.close()
        #expect(engine.isClosed)
        #expect(throws: JavaScriptError.engineClosed) { try engine.evaluate("1") }
        #expect(throws: JavaScriptError.engineClosed) { try handle.call() }
    }

    @Test func separateEnginesAreIsolated() throws {
        let first = try JavaScriptEngine()
        let second = try JavaScriptEngine()
        try first.evaluate("globalThis.shared = 'first'")
        #expect(try second.evaluate("typeof shared") == .string("undefined"))
    }

    @Test func concurrentCallsFromManyThreadsAreSerializedSafely() async throws {
        let engine = try JavaScriptEngine()
        try engine.evaluate("globalThis.counter = 0; globalThis.bump = () => ++counter;")
        let handle = try engine.function("bump")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<500 { _ = try? handle.call() } }
            }
        }
        #expect(try engine.evaluate("counter") == .number(4000))
    }
}
