import JavaScriptHost

/// A JavaScript function of JSRuntime the Swift side calls: where it lives and how many
/// parameters it declares (its `length`).
package struct BridgeFunction: Sendable, Hashable, CustomStringConvertible {
    /// The object that holds it: `__bridge`, `__service`, `__optimization.host` or `globalThis`.
    package let object: String
    /// Its name on that object.
    package let name: String
    /// The parameters it declares (JavaScript's `Function.length`); a request id that the
    /// channel appends counts as one.
    package let arity: Int

    /// The dotted path a `JavaScriptEngine` call takes, for example `__bridge.track`
    /// (`globalThis` functions: the bare name).
    package var path: String { object == "globalThis" ? name : "\(object).\(name)" }
    package var description: String { "\(path)/\(arity)" }

    fileprivate init(_ object: String, _ name: String, arity: Int) {
        self.object = object
        self.name = name
        self.arity = arity
    }
}

/// A function the Swift side installs on JavaScript's global object for JSRuntime to call.
package struct NativeCallback: Sendable, Hashable, CustomStringConvertible {
    /// The global name, for example `__nativeSettle`.
    package let name: String
    /// Whether this host installs it. JSRuntime calls the ones a host may leave out only after
    /// checking that they exist.
    package let installed: Bool

    package var description: String { name }

    fileprivate init(_ name: String, installed: Bool = true) {
        self.name = name
        self.installed = installed
    }
}

/// The whole contract between Swift and JSRuntime: every JavaScript function Swift calls, with
/// its arity, and every native callback Swift installs. No other Swift file spells one of these
/// names; the bridge contract tests (`BridgeContractTests`) check it against the loaded
/// JavaScript (in JavaScriptCore) and against `JSRuntime/bridge-contract.json`, the same list the
/// Node suite checks.
package enum BridgeContract {
    /// `__bridge`: one engine, one visitor (``OptimizationRuntime`` and the single-visitor client).
    package enum Visitor {
        package static let initialize = BridgeFunction("__bridge", "initialize", arity: 1)
        package static let destroy = BridgeFunction("__bridge", "destroy", arity: 0)
        package static let getState = BridgeFunction("__bridge", "getState", arity: 0)
        package static let resolveOptimizedEntry = BridgeFunction("__bridge", "resolveOptimizedEntry", arity: 2)
        package static let prepareEntry = BridgeFunction("__bridge", "prepareEntry", arity: 4)
        package static let prepareSelections = BridgeFunction("__bridge", "prepareSelections", arity: 3)
        package static let adoptEntry = BridgeFunction("__bridge", "adoptEntry", arity: 2)
        package static let adoptSelections = BridgeFunction("__bridge", "adoptSelections", arity: 2)
        package static let resolvePrepared = BridgeFunction("__bridge", "resolvePrepared", arity: 2)
        package static let registerDeferred = BridgeFunction("__bridge", "registerDeferred", arity: 1)
        package static let trackCurrentScreen = BridgeFunction("__bridge", "trackCurrentScreen", arity: 3)
        package static let consent = BridgeFunction("__bridge", "consent", arity: 1)
        package static let hasConsent = BridgeFunction("__bridge", "hasConsent", arity: 1)
        package static let setOnline = BridgeFunction("__bridge", "setOnline", arity: 1)
        /// The upsert carrying the queued Experience events: `(eventsJSON)` → JSON text
        /// `{url, method, headers, body}`.
        package static let experienceRequest = BridgeFunction("__bridge", "experienceRequest", arity: 1)
        /// A finished Experience flight: `(answerJSON)` (``ExperienceLink``).
        package static let experienceAnswered = BridgeFunction("__bridge", "experienceAnswered", arity: 1)
        /// Experience senders that stop waiting: `(ticketsJSON)`.
        package static let releaseExperienceWaiters = BridgeFunction("__bridge", "releaseExperienceWaiters", arity: 1)
        package static let getFlag = BridgeFunction("__bridge", "getFlag", arity: 1)
        package static let observeFlag = BridgeFunction("__bridge", "observeFlag", arity: 2)
        package static let unobserveFlag = BridgeFunction("__bridge", "unobserveFlag", arity: 1)
        package static let getMergeTagValue = BridgeFunction("__bridge", "getMergeTagValue", arity: 2)
        package static let getProfile = BridgeFunction("__bridge", "getProfile", arity: 0)
        package static let setLocale = BridgeFunction("__bridge", "setLocale", arity: 1)
        package static let reset = BridgeFunction("__bridge", "reset", arity: 0)
        package static let overrideAudience = BridgeFunction("__bridge", "overrideAudience", arity: 3)
        package static let overrideVariant = BridgeFunction("__bridge", "overrideVariant", arity: 2)
        package static let resetVariantOverride = BridgeFunction("__bridge", "resetVariantOverride", arity: 1)
        package static let resetAudienceOverride = BridgeFunction("__bridge", "resetAudienceOverride", arity: 1)
        package static let resetAllOverrides = BridgeFunction("__bridge", "resetAllOverrides", arity: 0)
        package static let setPreviewPanelOpen = BridgeFunction("__bridge", "setPreviewPanelOpen", arity: 1)
        package static let loadDefinitions = BridgeFunction("__bridge", "loadDefinitions", arity: 2)
        package static let getPreviewState = BridgeFunction("__bridge", "getPreviewState", arity: 0)
        package static let parseExperienceAnswer = BridgeFunction("__bridge", "parseExperienceAnswer", arity: 2)

        /// The async `__bridge` function of an event call: `(payload, requestId, callTime?)`,
        /// named as the call.
        package static func function(for method: EventMethod) -> BridgeFunction {
            BridgeFunction("__bridge", method.rawValue, arity: 3)
        }

        /// Every `__bridge` function: the event calls (``EventMethod``) and the others.
        package static let all: [BridgeFunction] = EventMethod.allCases.map(function(for:)) + [
            initialize, destroy, getState, resolveOptimizedEntry, prepareEntry, prepareSelections, adoptEntry,
            adoptSelections, resolvePrepared, registerDeferred, trackCurrentScreen, consent, hasConsent, setOnline,
            experienceRequest, experienceAnswered, releaseExperienceWaiters, getFlag, observeFlag, unobserveFlag, getMergeTagValue,
            getProfile, setLocale, reset, overrideAudience, overrideVariant, resetVariantOverride, resetAudienceOverride,
            resetAllOverrides, setPreviewPanelOpen, loadDefinitions, getPreviewState, parseExperienceAnswer,
        ]
    }

    /// `__service`: stateless entry points that take the visitor as arguments (the pool's
    /// engines). The service's Insights delivery and its Experience circuit are Swift's.
    package enum Service {
        package static let configure = BridgeFunction("__service", "configure", arity: 1)
        package static let call = BridgeFunction("__service", "call", arity: 4)
        package static let prepareHandoff = BridgeFunction("__service", "prepareHandoff", arity: 3)
        package static let commitReplay = BridgeFunction("__service", "commitReplay", arity: 3)
        /// The final outcome of a pending Experience call: `(context, status, headers, bodyText,
        /// failure)` → JSON text.
        package static let interpretExperience = BridgeFunction("__service", "interpretExperience", arity: 5)
        package static let prepareEntry = BridgeFunction("__service", "prepareEntry", arity: 4)
        package static let prepareSelections = BridgeFunction("__service", "prepareSelections", arity: 3)
        package static let adoptEntry = BridgeFunction("__service", "adoptEntry", arity: 2)
        package static let adoptSelections = BridgeFunction("__service", "adoptSelections", arity: 2)
        package static let resolvePrepared = BridgeFunction("__service", "resolvePrepared", arity: 2)
        package static let registerDeferred = BridgeFunction("__service", "registerDeferred", arity: 1)
        package static let getFlag = BridgeFunction("__service", "getFlag", arity: 2)
        package static let getMergeTagValue = BridgeFunction("__service", "getMergeTagValue", arity: 2)

        /// Every `__service` function, in JSRuntime's declaration order.
        package static let all: [BridgeFunction] = [
            configure, call, prepareHandoff, commitReplay, interpretExperience, prepareEntry, prepareSelections, adoptEntry, adoptSelections,
            resolvePrepared, registerDeferred, getFlag, getMergeTagValue,
        ]
    }

    /// `__optimization.host`: the shared core's view of its host.
    package enum Host {
        /// Whether the core logs at a level (`"debug"`, …); the runtime memoizes answers only
        /// while debug logging is off.
        package static let isLogEnabled = BridgeFunction("__optimization.host", "isLogEnabled", arity: 1)

        /// Every `__optimization.host` function Swift calls.
        package static let all: [BridgeFunction] = [isLogEnabled]
    }

    /// The benchmark-only script (`JSRuntime/benchmarks/`), never loaded by production engines.
    package enum Benchmark {
        /// The JSON-per-call resolve the benchmarks compare the engine path with.
        package static let jsonCallBaseline = BridgeFunction("__optimization", "jsonCallBaseline", arity: 2)
    }

    /// The callbacks JSRuntime calls on its host.
    package enum Native {
        /// Settles an async bridge request: `(requestId, resultJSON)`.
        package static let settle = NativeCallback("__nativeSettle")
        /// An accepted event, after its path took it: `(eventJSON)`.
        package static let onEventEmitted = NativeCallback("__nativeOnEventEmitted")
        /// A call consent refused, once per distinct call: `(reportJSON)`.
        package static let onEventBlocked = NativeCallback("__nativeOnEventBlocked")
        /// The visitor's state changed: `(stateJSON)`.
        package static let onStateChange = NativeCallback("__nativeOnStateChange")
        /// An observed flag's value changed: `(observerId, valueJSON)`.
        package static let onFlagValueChanged = NativeCallback("__nativeOnFlagValueChanged")
        /// Preview overrides changed: `(previewStateJSON)`. Optional; this host reads the preview
        /// state on demand instead.
        package static let onOverridesChanged = NativeCallback("__nativeOnOverridesChanged", installed: false)
        /// Hands a client's built Experience event to the host's queue: `(eventJSON, profileId |
        /// null)` → a ticket, 0 or -1, or JSON `{ticket, released}` (``ExperienceLink``).
        package static let experienceAccept = NativeCallback("__nativeExperienceAccept")
        /// Discards every queued Experience event (consent withdrawn) → JSON array of released tickets.
        package static let experiencePurge = NativeCallback("__nativeExperiencePurge")
        /// Erases every stored event (consent withdrawn).
        package static let outboxPurge = NativeCallback("__nativeOutboxPurge")
        /// Hands a client's built Insights event to the host's queue: `(eventJSON)` → queue size.
        package static let insightsAccept = NativeCallback("__nativeInsightsAccept")
        /// The visitor's current profile for the host's Insights queue: `(profileJSON | null)`.
        package static let insightsProfile = NativeCallback("__nativeInsightsProfile")
        /// Discards every queued Insights event (consent withdrawn).
        package static let insightsPurge = NativeCallback("__nativeInsightsPurge")

        /// The engine's own callbacks, followed by the host bindings every
        /// `JavaScriptEngine` installs (logging, clock, timers, UUIDs, fetch).
        package static let all: [NativeCallback] = [
            settle, onEventEmitted, onEventBlocked, onStateChange, onFlagValueChanged, onOverridesChanged,
            experienceAccept, experiencePurge, outboxPurge, insightsAccept, insightsProfile, insightsPurge,
        ] + HostBinding.allCases.map { NativeCallback($0.rawValue) }
    }

    /// The functions scripts install for every `JavaScriptEngine` (timers, fetch completions).
    package static let scriptCallbacks: [BridgeFunction] = ScriptCallback.allCases.map {
        BridgeFunction("globalThis", $0.rawValue, arity: $0.arity)
    }

    /// Every JavaScript function the Swift side calls in a production engine.
    package static var functions: [BridgeFunction] { Visitor.all + Service.all + Host.all + scriptCallbacks }
}

extension JavaScriptEngine {
    /// Calls `function` with `arguments`. Errors as `JavaScriptEngine/call(_:arguments:)`.
    @discardableResult
    package func call(_ function: BridgeFunction, _ arguments: JavaScriptValue...) throws -> JavaScriptValue {
        try call(function.path, arguments: arguments)
    }

    /// Calls `function` with `arguments`. Errors as `JavaScriptEngine/call(_:arguments:)`.
    @discardableResult
    package func call(_ function: BridgeFunction, arguments: [JavaScriptValue]) throws -> JavaScriptValue {
        try call(function.path, arguments: arguments)
    }

    /// A handle on `function` for repeated calls. Errors as `JavaScriptEngine/function(_:)`.
    package func function(_ function: BridgeFunction) throws -> JavaScriptFunction {
        try self.function(function.path)
    }

    /// Installs `callback` as `body`. Errors as `JavaScriptEngine/registerFunction(_:_:)`.
    package func register(_ callback: NativeCallback, _ body: @escaping NativeFunctionBody) throws {
        try registerFunction(callback.name, body)
    }
}
