import HostPlatform

/// The global functions every ``JavaScriptEngine`` installs for the scripts it runs: logging, a
/// clock, timers, UUIDs and `fetch`. Polyfills for `console`, `setTimeout`, `crypto.randomUUID`,
/// `fetch` and `AbortController` are written against these names.
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
    /// `__nativeFetch(url, method, headersJSON, body, requestId)`: starts a request on the
    /// engine's `FetchTransport`.
    case fetch = "__nativeFetch"
    /// `__nativeCancelFetch(requestId)`: cancels a request started by ``fetch``.
    case cancelFetch = "__nativeCancelFetch"

    /// The most UUIDs one ``randomUUID`` call answers.
    public static let maximumUUIDBatch = 256
}

/// The global functions a script installs for the engine to call back: a fired timer and a
/// finished `fetch`. A script that uses ``HostBinding/setTimeout`` or ``HostBinding/fetch`` must
/// define them.
public enum ScriptCallback: String, CaseIterable, Sendable {
    /// `__timerFired(id)`: a timer scheduled with `__nativeSetTimeout` fell due.
    case timerFired = "__timerFired"
    /// `__fetchComplete(requestId, status, headersJSON, bodyText, errorMessage)`: a request
    /// started with `__nativeFetch` finished (status 0 and a message on transport failure).
    case fetchComplete = "__fetchComplete"

    /// The parameters the script's function declares.
    public var arity: Int {
        switch self {
        case .timerFired: 1
        case .fetchComplete: 5
        }
    }
}
