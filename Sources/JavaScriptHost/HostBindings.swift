import Foundation
import HostPlatform
import Logging
import OptimizationJSON
import OrderedCollections

// The `__native*` globals the JSRuntime polyfills and core rely on (JSRuntime/README.md).

extension JavaScriptEngine {
    func installHostBindings() throws {
        try registerFunction(HostBinding.log.rawValue) { [logger = configuration.logger] arguments in
            let level = arguments.first?.stringValue ?? "log"
            let message = arguments.dropFirst().first.map(Self.text(of:)) ?? ""
            logger.log(level: Self.logLevel(forJavaScriptLevel: level), "\(message)", metadata: ["js": "\(level)"])
            return .undefined
        }
        try registerFunction(HostBinding.now.rawValue) { [clock = configuration.clock] _ in
            .number(clock.now())
        }
        try registerFunction(HostBinding.randomUUID.rawValue) { [weak self, randomUUID = configuration.randomUUID] arguments in
            // An injected generator answers one id per call (its ids need not be 36 characters).
            if let randomUUID { return .string(randomUUID()) }
            // Runs under the engine lock, which guards the generator.
            guard let self else { return .undefined }
            let count = arguments.first?.numberValue.flatMap { Int(exactly: $0) }.map { min(max($0, 1), HostBinding.maximumUUIDBatch) } ?? 1
            return .string(self.uuidGenerator.pointer.pointee.uuidStrings(count: count))
        }
        try registerFunction(HostBinding.setTimeout.rawValue) { [weak self] arguments in
            guard let self, let id = arguments.first?.numberValue.flatMap(Int.init(exactly:)) else {
                throw HostBindingError.invalidArguments("\(HostBinding.setTimeout.rawValue)(id, delayMs)")
            }
            let delay = arguments.dropFirst().first?.numberValue ?? 0
            self.scheduleTimer(id: id, delay: delay)
            return .undefined
        }
        try registerFunction(HostBinding.clearTimeout.rawValue) { [weak self] arguments in
            if let self, let id = arguments.first?.numberValue.flatMap(Int.init(exactly:)) {
                self.cancelTimer(id: id)
            }
            return .undefined
        }
        try registerFunction(HostBinding.fetch.rawValue) { [weak self] arguments in
            guard let self, arguments.count >= 5,
                  case .string(let url) = arguments[0],
                  let id = arguments[4].numberValue.flatMap(Int.init(exactly:))
            else { throw HostBindingError.invalidArguments("\(HostBinding.fetch.rawValue)(url, method, headersJSON, body, requestId)") }
            let method = arguments[1].stringValue ?? "GET"
            let headers = Self.headers(fromJSON: arguments[2].stringValue ?? arguments[2].jsonText)
            let body = arguments[3].stringValue
            self.startFetch(id: id, request: FetchRequest(url: url, method: method, headers: headers, body: body))
            return .undefined
        }
        try registerFunction(HostBinding.cancelFetch.rawValue) { [weak self] arguments in
            if let self, let id = arguments.first?.numberValue.flatMap(Int.init(exactly:)) {
                self.cancelFetch(id: id)
            }
            return .undefined
        }
    }

    // MARK: Timers

    private func scheduleTimer(id: Int, delay: Double) {
        lock.withLock {
            timers.removeValue(forKey: id)?.cancel()
            timers[id] = configuration.clock.schedule(after: .milliseconds(delay.isFinite ? delay : 0)) { [weak self] in
                self?.fireTimer(id: id)
            }
        }
    }

    private func cancelTimer(id: Int) {
        lock.withLock { timers.removeValue(forKey: id)?.cancel() }
    }

    private func fireTimer(id: Int) {
        lock.withLock {
            guard context != nil, timers.removeValue(forKey: id) != nil else { return }
            do {
                try call(ScriptCallback.timerFired.rawValue, .number(Double(id)))
            } catch {
                logger.error("a JavaScript timer callback failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Number of JavaScript timers scheduled and not yet fired or cleared.
    package var pendingTimerCount: Int {
        lock.withLock { timers.count }
    }

    // MARK: Fetch
    //
    // Each `__nativeFetch` runs `transport.send` in its own unstructured task, kept in `fetches`
    // under its JavaScript id until the result is delivered. `__nativeCancelFetch(id)` (the fetch
    // facade calls it when the request's AbortSignal aborts: a budget running out,
    // `AbortController.abort()`) and ``close()`` remove the task and cancel it; the transport
    // cancels the HTTP request and closes its connection (`FetchTransport`), and nothing is
    // delivered for that id any more, because delivery needs the id still in `fetches`. Removal,
    // cancellation and delivery all happen under the engine lock, so a result that races a cancel
    // is either delivered before it or dropped after it, never both.

    private func startFetch(id: Int, request: FetchRequest) {
        let transport = configuration.transport
        lock.withLock {
            // A reused id replaces (and cancels) the request it named.
            fetches.removeValue(forKey: id)?.cancel()
            fetchTasksRunning += 1
            // The completion must never run re-entrantly inside __nativeFetch: it runs in a task.
            fetches[id] = Task { [weak self] in
                let result: Result<FetchResponse, any Error>
                do {
                    result = .success(try await transport.send(request))
                } catch {
                    result = .failure(error)
                }
                self?.completeFetch(id: id, result: result)
            }
        }
    }

    /// Cancels the request JavaScript knows as `id` (its task, and through the transport its HTTP
    /// request); unknown or already delivered ids are ignored.
    private func cancelFetch(id: Int) {
        let cancelled = lock.withLock { () -> Bool in
            guard let task = fetches.removeValue(forKey: id) else { return false }
            task.cancel()
            return true
        }
        if cancelled { logger.debug("fetch cancelled by JavaScript", metadata: ["fetch": "\(id)"]) }
    }

    private func completeFetch(id: Int, result: Result<FetchResponse, any Error>) {
        lock.withLock {
            fetchTasksRunning -= 1
            guard context != nil, fetches.removeValue(forKey: id) != nil else { return }
            let arguments: [JavaScriptValue]
            switch result {
            case .success(let response):
                arguments = [
                    .number(Double(id)), .number(Double(response.status)),
                    .string(Self.json(ofHeaders: response.headers)), .string(response.body), .string(""),
                ]
            case .failure(let error):
                let message = "\(error)"
                arguments = [
                    .number(Double(id)), .number(0), .string("{}"), .string(""),
                    .string(message.isEmpty ? "fetch failed" : message),
                ]
            }
            do {
                try call(ScriptCallback.fetchComplete.rawValue, arguments: arguments)
            } catch {
                logger.error("delivering a fetch result to JavaScript failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Number of `__nativeFetch` requests started and neither delivered back to JavaScript nor
    /// cancelled (by `__nativeCancelFetch` or ``close()``).
    package var pendingFetchCount: Int {
        lock.withLock { fetches.count }
    }

    /// Number of `__nativeFetch` tasks whose transport call has not returned yet, cancelled ones
    /// included: a cancelled request counts until the transport has actually stopped it. Tasks
    /// still running when the engine is deallocated are no longer counted by anyone.
    package var runningFetchCount: Int {
        lock.withLock { fetchTasksRunning }
    }

    // MARK: Helpers

    static func logLevel(forJavaScriptLevel level: String) -> Logger.Level {
        switch level {
        case "error", "fatal": return .error
        case "warn": return .warning
        case "info": return .info
        default: return .debug
        }
    }

    static func text(of value: JavaScriptValue) -> String {
        switch value {
        case .string(let string): return string
        default: return value.jsonText ?? "undefined"
        }
    }

    /// The headers of a `headersJSON` argument (an object; a value that is not a string is
    /// written as its JSON text); empty for anything else.
    static func headers(fromJSON text: String?) -> [String: String] {
        guard let text, let object = (try? JSONValue(jsonText: text))?.objectValue else { return [:] }
        var headers: [String: String] = [:]
        headers.reserveCapacity(object.count)
        for (name, value) in object {
            headers[name] = value.stringValue ?? (try? value.jsonText()) ?? ""
        }
        return headers
    }

    /// `headers` as a JSON object, names sorted.
    static func json(ofHeaders headers: [String: String]) -> String {
        var object = OrderedDictionary<String, JSONValue>(minimumCapacity: headers.count)
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { object[name] = .string(value) }
        return (try? JSONValue.object(object).jsonText()) ?? "{}"
    }
}

/// A host binding was called with arguments that break its contract.
public enum HostBindingError: Error, Sendable, CustomStringConvertible {
    /// The arguments do not match the binding; the value is its expected signature, for example
    /// `__nativeSetTimeout(id, delayMs)`. JavaScript sees it as a thrown `Error`.
    case invalidArguments(String)

    public var description: String {
        switch self {
        case .invalidArguments(let signature): return "invalid arguments, expected \(signature)"
        }
    }
}
