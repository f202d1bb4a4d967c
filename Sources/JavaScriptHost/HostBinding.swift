import HostPlatform

/// The global functions every ``JavaScriptEngine`` installs for the scripts it runs: logging, a
/// clock, timers and UUIDs. Polyfills for `console`, `setTimeout` and `crypto.randomUUID` are
/// written against these names.
public enum HostBinding: String, CaseIterable, Sendable {
    /// `__nativeLog(level, message)`: writes to the engine's `Logger`.
    case log = "__nativeLog"
    /// `__nativeNow()`: milliseconds since the Unix epoch on the engine's `HostClock`.
    case now = "__nativeNow"
    /// `__nativeRandomUUID(count?)`: `count` (default 1, at most ``maximumUUIDBatch``) random
    /// version-4 UUID strings, concatenated (36 characters each); an injected generator
    /// answers one id per call.
    case randomUUID = "__nativeRandomUUID"
    /// `__nativeSetTimeout(id, delayMs)`: schedules `__optimization.polyfills.fireTimer(id)`.
    case setTimeout = "__nativeSetTimeout"
    /// `__nativeClearTimeout(id)`: cancels a scheduled timer.
    case clearTimeout = "__nativeClearTimeout"

    /// The most UUIDs one ``randomUUID`` call answers.
    public static let maximumUUIDBatch = 256
}

/// The global functions a script installs for the engine to call back: a fired timer. A script
/// that uses ``HostBinding/setTimeout`` must define it.
public enum ScriptCallback: String, CaseIterable, Sendable {
    /// `__timerFired(id)`: a timer scheduled with `__nativeSetTimeout` fell due.
    case timerFired = "__timerFired"

    /// The parameters the script's function declares.
    public var arity: Int {
        switch self {
        case .timerFired: 1
        }
    }
}
