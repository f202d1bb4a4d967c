import HostPlatform
import OptimizationJSON
import OptimizationEngine

// Custom flags.
//
// A flag is the value of an Experience API change (`changes`, keyed by `key`; a `{"value": …}`
// object wrapper is unwrapped). Reading a flag also attempts a flag-view event (Insights
// `component` event, componentType `Variable`) for the visitor: de-duplicated per flag on
// (value, experience, variant, profile id); nothing without a profile; before consent (and
// unless the allow-list has `flag` or `component`) reported on ``OptimizationClient/blockedEvents``
// once per distinct (flag, value) rather than on every read. Preview overrides change flags
// derived from inline-variable components.
//
// Telemetry: ``OptimizationClient/getFlag(_:)`` records each read as a flag evaluation
// (OpenTelemetry `feature_flag.evaluation` event, evaluation counter); see its documentation.
//
// Threading: both methods are synchronous and safe from any thread; the flag-view event (or the
// blocked report) is published before they return. Errors: none are thrown.
extension OptimizationClient {
    /// The current value of flag `name`.
    ///
    /// Each read is a flag evaluation: a `feature_flag.evaluation` event on the task's current
    /// span (``Environment/tracer``) and a count on `optimization_flag_evaluations_total`
    /// (``Environment/metricsFactory``): reason `targeting_match` for a selected variant,
    /// `default` for a baseline, `error` with `error.type` `flag_not_found` or
    /// `provider_not_ready`. Nothing when neither a tracer nor a metrics backend is set.
    /// - Returns: the flag's JSON value; `.null` when the flag is absent, and before
    ///   `initialize` (or after ``destroy()``).
    public func getFlag(_ name: String) -> JSONValue {
        let value = callSync(BridgeContract.Visitor.getFlag, .string(name))?.stringValue.flatMap { try? JSONValue(jsonText: $0) }
        if flagEvaluations.isRecording {
            if value == nil, currentRuntime == nil {
                flagEvaluations.record(FeatureFlagEvaluation(key: name, reason: .error, errorType: "provider_not_ready"))
            } else {
                flagEvaluations.record(FeatureFlagEvaluation(key: name, value: value ?? .null, changes: state.changes?.arrayValue ?? []))
            }
        }
        return value ?? .null
    }

    /// The distinct values of flag `name` (`.null` while absent): the current value first — already
    /// buffered when this returns — then every change (deep equality). Each value is also a
    /// flag-view attempt (see ``getFlag(_:)``); when tracking becomes possible later (consent and
    /// a profile) a catch-up flag view is sent without repeating the value.
    ///
    /// The stream finishes on ``destroy()`` and when the client is initialized again; before
    /// `initialize` it finishes at once without a value. Stop iterating to unsubscribe. Up to
    /// 1024 unread values are buffered (the oldest are dropped beyond that).
    public func flagValues(_ name: String) -> AsyncStream<JSONValue> {
        guard let runtime = currentRuntime else {
            return AsyncStream { $0.finish() }
        }
        return runtime.channel.flags.stream(name: name, engine: runtime.engine, logger: environment.logger)
    }
}
