import Foundation
import HostPlatform
import Logging

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
