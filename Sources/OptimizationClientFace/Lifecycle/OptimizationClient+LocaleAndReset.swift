import JavaScriptHost
import OptimizationEngine

// Locale and reset.
//
// Threading: synchronous, safe from any thread; ``state`` (and ``stateChanges``) reflect the
// change before the method returns.
extension OptimizationClient {
    /// Sets the locale of later events (`context.locale`) and Experience API requests
    /// (`?locale=`). The value is normalised: trimmed, `_` → `-` (`" de_DE "` → `"de-DE"`).
    /// - Returns: the normalised locale.
    /// - Throws: `OptimizationError/notInitialized` before `initialize`;
    ///   `OptimizationError/configError(_:)` for a value that is not a locale (`""`, `"*"`,
    ///   `"und"`, …), with the state unchanged.
    @discardableResult
    public func setLocale(_ locale: String) throws(OptimizationError) -> String {
        guard let runtime = currentRuntime else { throw .notInitialized }
        let result: JavaScriptValue
        do {
            result = try runtime.engine.call(BridgeContract.Visitor.setLocale, .string(locale))
        } catch JavaScriptError.exception(let exception) {
            throw .configError(exception.message)
        } catch JavaScriptError.engineClosed {
            throw .notInitialized
        } catch {
            throw .bridgeError("\(error)")
        }
        guard let normalized = result.stringValue else { throw .bridgeError("setLocale returned no locale") }
        return normalized
    }

    /// Forgets the visitor: clears the profile, changes, selected optimizations, optimization
    /// contexts, preview overrides, the anonymous id, the current-screen and sticky-view
    /// de-duplication, and the stored profile continuity. Consent (in memory and on disk),
    /// locale and queued events are kept; the Experience request state returns to idle. The
    /// next Experience event creates a new profile. No-op before `initialize`.
    public func reset() {
        guard let runtime = currentRuntime else { return }
        callSync(BridgeContract.Visitor.reset)
        runtime.persistence?.clearProfileContinuity()
    }
}
