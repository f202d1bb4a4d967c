import CJavaScriptCore
import Foundation
import HostPlatform
import Logging

/// One JavaScriptCore VM: its own context group and global context, guarded by a lock.
///
/// **Threading.** Any thread may call any method synchronously; calls are serialized by a
/// recursive lock held for the duration of one call (no actor hop). Native functions run on the
/// calling thread while it holds the lock, so they may re-enter the engine. Two engines never
/// share a VM lock, so separate engines run in parallel.
///
/// **Host bindings.** Before any script runs the engine installs `__nativeLog`, `__nativeNow`,
/// `__nativeSetTimeout`/`__nativeClearTimeout` (on ``Configuration/clock``) and
/// `__nativeRandomUUID`; see `JSRuntime/README.md` for their contracts. Scripts get no HTTP
/// binding: the host delivers every request itself.
///
/// **Memory.** Every JavaScriptCore handle stays inside this type. Values that outlive one call
/// (function handles) are protected once and unprotected exactly once; call arguments are
/// protected for the duration of the call.
public final class JavaScriptEngine: @unchecked Sendable {
    /// How an engine is set up.
    public struct Configuration: Sendable {
        /// Time source for `__nativeNow` and every JavaScript timer.
        public var clock: any HostClock
        /// Longest time one entry into JavaScript may run before the watchdog
        /// terminates it with ``JavaScriptError/executionTimeLimitExceeded(after:)``;
        /// nil disables the watchdog.
        public var executionTimeLimit: Duration?
        /// Receives the engine's own diagnostics and everything the scripts log.
        public var logger: Logger
        /// Overrides `__nativeRandomUUID` (deterministic ids in tests). Nil: lowercase RFC 4122
        /// v4 UUIDs from a fast generator seeded from the system's secure random source.
        public var randomUUID: (@Sendable () -> String)?
        /// A synchronous full garbage collection runs after this many entries into JavaScript
        /// (counted at the outermost call; nil: never).
        ///
        /// JavaScriptCore schedules its full collections on a run-loop timer, and no GLib main
        /// loop runs on the threads that use an engine, so those timers never fire; collection is
        /// then driven by allocation alone, and in some runs old-generation garbage was never
        /// collected: over 900,000 resolves the heap grew to 255–722 MiB (1–2.7 million cells)
        /// and the process to 1.2 GiB, while one full collection brought it back to 1 MiB. This
        /// bounds that growth. A full collection of a small heap costs about a millisecond, so
        /// the default (every 20,000 calls) adds well under 1 % to a busy engine.
        public var fullCollectionInterval: Int?

        /// Creates a configuration; every parameter has a default.
        /// - Parameters:
        ///   - clock: time source for `__nativeNow` and every JavaScript timer; `SystemClock`
        ///     by default.
        ///   - executionTimeLimit: longest time one entry into JavaScript may run;
        ///     default 10, nil disables the watchdog.
        ///   - logger: receives the engine's diagnostics and the scripts' logs; discards
        ///     everything by default.
        ///   - randomUUID: overrides `__nativeRandomUUID`; nil (the default) uses the built-in
        ///     generator.
        ///   - fullCollectionInterval: entries into JavaScript between forced full collections;
        ///     default 20,000, values below 1 count as 1, nil never forces one.
        public init(
            clock: any HostClock = SystemClock(),
            executionTimeLimit: Duration? = .seconds(10),
            logger: Logger = Logger(label: "JavaScriptHost", factory: { _ in SwiftLogNoOpLogHandler() }),
            randomUUID: (@Sendable () -> String)? = nil,
            fullCollectionInterval: Int? = 20_000
        ) {
            self.clock = clock
            self.executionTimeLimit = executionTimeLimit
            self.logger = logger
            self.randomUUID = randomUUID
            self.fullCollectionInterval = fullCollectionInterval.map { max(1, $0) }
        }

        /// The configuration of ``init(clock:executionTimeLimit:logger:randomUUID:fullCollectionInterval:)``;
        /// `transport` is ignored: an engine sends no HTTP request.
        @available(*, deprecated, message: "An engine sends no HTTP request: drop the transport argument.")
        public init(
            clock: any HostClock = SystemClock(),
            transport: any FetchTransport,
            executionTimeLimit: Duration? = .seconds(10),
            logger: Logger = Logger(label: "JavaScriptHost", factory: { _ in SwiftLogNoOpLogHandler() }),
            randomUUID: (@Sendable () -> String)? = nil,
            fullCollectionInterval: Int? = 20_000
        ) {
            self.init(
                clock: clock, executionTimeLimit: executionTimeLimit, logger: logger, randomUUID: randomUUID,
                fullCollectionInterval: fullCollectionInterval)
        }
    }

    /// The configuration the engine was created with.
    public let configuration: Configuration
    var logger: Logger { configuration.logger }

    let lock = EngineLock()
    // Everything below is guarded by `lock`.
    private var group: JSContextGroupRef?
    private(set) var context: JSGlobalContextRef?
    private var nextHandleToken = 0
    private var handles: [Int: (function: JSObjectRef, this: JSObjectRef)] = [:]
    /// The property names of each function path called so far (`"__service.call"` →
    /// `__service`, `call`), made once: a call still looks every property up, but splits and
    /// converts no text. At most ``maximumCachedPaths`` paths; released with the context.
    private var pathNames: [String: [JSStringRef]] = [:]
    private static let maximumCachedPaths = 256
    var timers: [Int: any HostTimer] = [:]
    private let watchdog = WatchdogState()
    /// Nesting of ``withContext(_:)`` on the thread holding the lock (calls made from inside a
    /// host function nest).
    private var callDepth = 0
    /// Outermost entries into JavaScript since the last forced full collection.
    private var callsSinceCollection = 0
    /// Runs before every outermost entry into JavaScript (see ``setEntryHook(_:)``).
    private var entryHook: (() -> Void)?
    /// True while ``entryHook`` runs, so the calls it makes do not run it again.
    private var runningEntryHook = false
    /// Boundary crossings (guarded by the lock).
    let crossings = BoundaryCrossings()
    /// Written on every id drawn (by the host on each memoized resolve, too): on lines of its own.
    let uuidGenerator = CacheLineIsolated(RandomUUIDGenerator())

    /// Creates the VM and installs the host bindings.
    /// - Throws: ``JavaScriptError/contextCreationFailed``.
    public init(configuration: Configuration = Configuration()) throws {
        self.configuration = configuration
        guard let group = JSContextGroupCreate() else { throw JavaScriptError.contextCreationFailed }
        guard let context = JSGlobalContextCreateInGroup(group, nil) else {
            JSContextGroupRelease(group)
            throw JavaScriptError.contextCreationFailed
        }
        self.group = group
        self.context = context
        if let limit = configuration.executionTimeLimit {
            JSContextGroupSetExecutionTimeLimit(
                group, limit.inMilliseconds / 1_000, watchdogShouldTerminate, Unmanaged.passUnretained(watchdog).toOpaque())
        }
        try installHostBindings()
    }

    deinit {
        close()
    }

    /// True once ``close()`` ran.
    public var isClosed: Bool {
        lock.withLock { context == nil }
    }

    /// Releases the VM: cancels every pending timer, drops every handle. Idempotent. Later calls
    /// throw ``JavaScriptError/engineClosed``.
    public func close() {
        lock.withLock {
            guard let context, let group else { return }
            for timer in timers.values { timer.cancel() }
            timers.removeAll()
            for handle in handles.values {
                JSValueUnprotect(context, handle.function)
                JSValueUnprotect(context, handle.this)
            }
            handles.removeAll()
            for names in pathNames.values { names.forEach(JSStringRelease) }
            pathNames.removeAll()
            entryHook = nil
            if configuration.executionTimeLimit != nil { JSContextGroupClearExecutionTimeLimit(group) }
            JSGlobalContextRelease(context)
            JSContextGroupRelease(group)
            self.context = nil
            self.group = nil
        }
    }

    // MARK: Running scripts

    /// Evaluates `script` as a classic script in the global scope.
    /// - Parameters:
    ///   - script: the JavaScript source text.
    ///   - sourceURL: the name JavaScript errors and stacks report for this script.
    /// - Returns: the completion value (objects and arrays as JSON text).
    /// - Throws: ``JavaScriptError``.
    @discardableResult
    public func evaluate(_ script: String, sourceURL: String? = nil) throws -> JavaScriptValue {
        try withContext { context in
            let source = makeJSString(script)
            defer { JSStringRelease(source) }
            let url = sourceURL.map(makeJSString)
            defer { url.map(JSStringRelease) }
            var exception: JSValueRef?
            watchdog.fired = false
            let result = JSEvaluateScript(context, source, nil, url, 1, &exception)
            if let exception { throw error(from: exception, in: context) }
            guard let result else { return .undefined }
            return try JavaScriptConversion.swiftValue(of: result, in: context)
        }
    }

    /// Checks `script` for syntax errors without running it.
    package func checkSyntax(_ script: String, sourceURL: String? = nil) throws {
        try withContext { context in
            let source = makeJSString(script)
            defer { JSStringRelease(source) }
            let url = sourceURL.map(makeJSString)
            defer { url.map(JSStringRelease) }
            var exception: JSValueRef?
            if !JSCheckScriptSyntax(context, source, url, 1, &exception), let exception {
                throw error(from: exception, in: context)
            }
        }
    }

    /// Calls the function at the global property path `path` (for example `"__bridge.getState"`,
    /// with `this` = `__bridge`). Resolves the path on every call; keep a
    /// ``function(_:)`` handle for hot paths.
    @discardableResult
    public func call(_ path: String, _ arguments: JavaScriptValue...) throws -> JavaScriptValue {
        try call(path, arguments: arguments)
    }

    /// ``call(_:_:)`` with an argument array.
    @discardableResult
    public func call(_ path: String, arguments: [JavaScriptValue]) throws -> JavaScriptValue {
        try withContext { context in
            let (function, this) = try resolveFunction(path, in: context)
            return try invoke(function, this: this, arguments: arguments, in: context)
        }
    }

    /// A reusable handle on the function at `path`, resolved once. The handle keeps the function
    /// alive (protected) until the handle is released or the engine closes.
    public func function(_ path: String) throws -> JavaScriptFunction {
        try withContext { context in
            let (function, this) = try resolveFunction(path, in: context)
            JSValueProtect(context, function)
            JSValueProtect(context, this)
            nextHandleToken += 1
            handles[nextHandleToken] = (function, this)
            return JavaScriptFunction(engine: self, token: nextHandleToken, path: path)
        }
    }

    /// Installs a global function `name` that runs `body`. Replaces an existing global.
    public func registerFunction(_ name: String, _ body: @escaping NativeFunctionBody) throws {
        try withContext { context in
            let box = Unmanaged.passRetained(NativeFunctionBox(name: name, body: body, crossings: crossings)).toOpaque()
            let function = JSObjectMake(context, nativeFunctionClass, box)
            // Give it .call/.apply/.bind (JSC notes, pitfall 4).
            let functionPrototype = try evaluateInternal("Function.prototype", in: context)
            JSObjectSetPrototype(context, function, functionPrototype)
            let global = JSContextGetGlobalObject(context)
            var exception: JSValueRef?
            withJSString(name) { JSObjectSetProperty(context, global, $0, function, 0, &exception) }
            if let exception { throw error(from: exception, in: context) }
        }
    }

    /// Runs `body` while holding the engine lock, so several calls happen with nothing in
    /// between (for example a cache check and its retry).
    public func withExclusiveAccess<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Like ``withExclusiveAccess(_:)`` when the lock is free (or already held by this thread);
    /// returns nil at once, without running `body`, while another thread holds it. A pool uses
    /// this to pass over a busy engine instead of waiting for it.
    public func tryWithExclusiveAccess<Result>(_ body: () throws -> Result) rethrows -> Result? {
        guard lock.try() else { return nil }
        defer { lock.unlock() }
        return try body()
    }

    /// Installs `hook` to run before every outermost entry into JavaScript (a call, an
    /// evaluation or a timer), on the calling thread with the engine lock
    /// held, so that work the host deferred is in the VM before any script can observe it. The
    /// hook may call into the engine (those calls do not run it again) and must not throw; it
    /// should return at once when it has nothing to do. Nil removes it.
    public func setEntryHook(_ hook: (() -> Void)?) {
        lock.withLock { entryHook = hook }
    }

    /// A fresh id from the same source as `__nativeRandomUUID` (``Configuration/randomUUID``,
    /// or the engine's generator), so ids drawn by the host and by scripts form one sequence.
    public func randomUUID() -> String {
        if let randomUUID = configuration.randomUUID { return randomUUID() }
        return lock.withLock { uuidGenerator.pointer.pointee.uuidString() }
    }

    // MARK: Diagnostics

    /// Runs a real, synchronous full garbage collection. For tests; slow.
    package func collectGarbage() {
        lock.withLock {
            guard let context else { return }
            JSSynchronousGarbageCollectForDebugging(context)
        }
    }

    /// The VM's heap statistics.
    public func memoryStatistics() throws -> JavaScriptMemoryStatistics {
        try withContext { context in
            guard let statistics = JSGetMemoryUsageStatistics(context) else {
                return JavaScriptMemoryStatistics(heapSize: 0, objectCount: 0, protectedObjectCount: 0)
            }
            func number(_ name: String) -> Int {
                let value = withJSString(name) { JSObjectGetProperty(context, statistics, $0, nil) }
                guard let value else { return 0 }
                let number = JSValueToNumber(context, value, nil)
                return Int(clampingJavaScriptNumber: number) ?? 0
            }
            return JavaScriptMemoryStatistics(
                heapSize: number("heapSize"), objectCount: number("objectCount"),
                protectedObjectCount: number("protectedObjectCount"))
        }
    }

    // MARK: Internals (lock held)

    /// Runs `body` with the lock held and the live context, or throws ``JavaScriptError/engineClosed``.
    func withContext<Result>(_ body: (JSGlobalContextRef) throws -> Result) throws -> Result {
        lock.lock()
        defer { lock.unlock() }
        guard let context else { throw JavaScriptError.engineClosed }
        crossings.intoJavaScript += 1
        if callDepth == 0, !runningEntryHook, let entryHook {
            runningEntryHook = true
            entryHook()
            runningEntryHook = false
        }
        callDepth += 1
        defer {
            callDepth -= 1
            if callDepth == 0 { collectIfDue() }
        }
        return try body(context)
    }

    /// Counts an outermost call and runs the full collection ``Configuration/fullCollectionInterval``
    /// asks for (lock held; skipped when the call closed the engine).
    private func collectIfDue() {
        guard let interval = configuration.fullCollectionInterval else { return }
        callsSinceCollection += 1
        guard callsSinceCollection >= interval, let context else { return }
        callsSinceCollection = 0
        JSSynchronousGarbageCollectForDebugging(context)
    }

    func invoke(
        _ function: JSObjectRef, this: JSObjectRef?, arguments: [JavaScriptValue], in context: JSGlobalContextRef
    ) throws -> JavaScriptValue {
        var values: [JSValueRef?] = []
        values.reserveCapacity(arguments.count)
        var protected = 0
        // Values held only in Swift memory are invisible to the collector: protect each heap
        // value (strings, objects) as soon as it exists (JSC notes, pitfall 1) and unprotect it
        // exactly once afterwards. Numbers, booleans, null and undefined are not heap cells.
        defer {
            for (argument, value) in zip(arguments.prefix(protected), values) where argument.isHeapValue {
                if let value { JSValueUnprotect(context, value) }
            }
        }
        for argument in arguments {
            let value = try JavaScriptConversion.jsValue(of: argument, in: context)
            if argument.isHeapValue { JSValueProtect(context, value) }
            values.append(value)
            protected += 1
        }
        var exception: JSValueRef?
        watchdog.fired = false
        let result = values.withUnsafeBufferPointer { buffer in
            JSObjectCallAsFunction(context, function, this, buffer.count, buffer.baseAddress, &exception)
        }
        if let exception { throw error(from: exception, in: context) }
        guard let result else { return .undefined }
        return try JavaScriptConversion.swiftValue(of: result, in: context)
    }

    func invokeHandle(token: Int, arguments: [JavaScriptValue]) throws -> JavaScriptValue {
        try withContext { context in
            guard let handle = handles[token] else { throw JavaScriptError.engineClosed }
            return try invoke(handle.function, this: handle.this, arguments: arguments, in: context)
        }
    }

    func releaseHandle(token: Int) {
        lock.withLock {
            guard let context, let handle = handles.removeValue(forKey: token) else { return }
            JSValueUnprotect(context, handle.function)
            JSValueUnprotect(context, handle.this)
        }
    }

    private func resolveFunction(_ path: String, in context: JSGlobalContextRef) throws -> (JSObjectRef, JSObjectRef) {
        var this: JSObjectRef = JSContextGetGlobalObject(context)
        var current: JSValueRef = this
        let names: [JSStringRef]
        var owned = false
        if let cached = pathNames[path] {
            names = cached
        } else {
            names = path.split(separator: ".").map { makeJSString(String($0)) }
            if pathNames.count < Self.maximumCachedPaths { pathNames[path] = names } else { owned = true }
        }
        defer { if owned { names.forEach(JSStringRelease) } }
        for (index, name) in names.enumerated() {
            guard let object = JSValueToObject(context, current, nil) else { throw JavaScriptError.notAFunction(path) }
            if index > 0 { this = object }
            var exception: JSValueRef?
            let next = JSObjectGetProperty(context, object, name, &exception)
            if let exception { throw error(from: exception, in: context) }
            guard let next else { throw JavaScriptError.notAFunction(path) }
            current = next
        }
        guard JSValueIsObject(context, current), let function = JSValueToObject(context, current, nil),
              JSObjectIsFunction(context, function)
        else { throw JavaScriptError.notAFunction(path) }
        return (function, this)
    }

    private func evaluateInternal(_ script: String, in context: JSGlobalContextRef) throws -> JSValueRef? {
        var exception: JSValueRef?
        let result = withJSString(script) { JSEvaluateScript(context, $0, nil, nil, 1, &exception) }
        if let exception { throw error(from: exception, in: context) }
        return result
    }

    private func error(from exception: JSValueRef, in context: JSContextRef) -> JavaScriptError {
        if watchdog.fired, let limit = configuration.executionTimeLimit {
            watchdog.fired = false
            return .executionTimeLimitExceeded(after: limit)
        }
        return .exception(JavaScriptConversion.exception(from: exception, in: context))
    }
}

/// Heap figures reported by JavaScriptCore.
public struct JavaScriptMemoryStatistics: Sendable, Equatable {
    /// Bytes of live JavaScript heap.
    public var heapSize: Int
    /// Number of objects on the JavaScript heap.
    public var objectCount: Int
    /// Values currently protected from collection (must return to its start value after work).
    public var protectedObjectCount: Int
}

/// Set by the watchdog callback on the thread running the terminated script.
final class WatchdogState: @unchecked Sendable {
    var fired = false
}

private func watchdogShouldTerminate(_ context: JSContextRef?, _ info: UnsafeMutableRawPointer?) -> Bool {
    if let info { Unmanaged<WatchdogState>.fromOpaque(info).takeUnretainedValue().fired = true }
    return true
}
