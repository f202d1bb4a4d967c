import OptimizationVocabulary
import OptimizationJSON
import OptimizationTransport

extension OptimizationConfig {
    /// The object handed to `__bridge.initialize`.
    var bridgeConfiguration: JSONValue {
        var object = tenantMembers
        object.merge([
            "logLevel": .string(logLevel.rawValue),
            "channel": .string(channel),
            "library": ["name": .string(OptimizationLibrary.name), "version": .string(OptimizationLibrary.version)],
            "entryCacheSize": .number(JSONNumber(max(1, entryCacheSize))),
        ]) { current, _ in current }
        if let locale { object["locale"] = .string(locale) }
        object["allowedEventTypes"] = .array((allowedEventTypes ?? OptimizationClient.defaultAllowedEventTypes).map(JSONValue.string))
        if let defaults { object["defaults"] = defaults.bridgeValue }
        if let api = api?.bridgeValue { object["api"] = api }
        return .object(object)
    }
}
