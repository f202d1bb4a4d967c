import OrderedCollections

/// The payloads of the Insights calls that take plain arguments, built once for both faces
/// (``OptimizationClient`` and ``OptimizationRequest``).
enum InsightsPayloads {
    /// `trackHover`: `componentId`, `hoverId`, `hoverDurationMs` (whole milliseconds), and the matched
    /// experience and variant when known.
    static func hover(
        componentId: String, hoverId: String, hoverDuration: Duration, experienceId: String?, variantIndex: Int?
    ) -> OrderedDictionary<String, JSONValue> {
        var payload: OrderedDictionary<String, JSONValue> = [
            "componentId": .string(componentId), "hoverId": .string(hoverId), "hoverDurationMs": .number(JSONNumber(hoverDuration.wholeMilliseconds)),
        ]
        if let experienceId { payload["experienceId"] = .string(experienceId) }
        if let variantIndex { payload["variantIndex"] = .number(JSONNumber(variantIndex)) }
        return payload
    }

    /// `trackFlagView`: the flag's `componentId`, and the matched experience and variant when known.
    static func flagView(componentId: String, experienceId: String?, variantIndex: Int?) -> OrderedDictionary<String, JSONValue> {
        var payload: OrderedDictionary<String, JSONValue> = ["componentId": .string(componentId)]
        if let experienceId { payload["experienceId"] = .string(experienceId) }
        if let variantIndex { payload["variantIndex"] = .number(JSONNumber(variantIndex)) }
        return payload
    }
}
