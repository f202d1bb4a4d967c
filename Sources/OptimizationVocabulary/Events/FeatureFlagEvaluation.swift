import OptimizationJSON

/// One flag evaluation as OpenTelemetry's feature-flag conventions describe it: the flag's key,
/// the variant chosen, why, and the error when there was one. Carries no visitor data and no
/// flag value.
package struct FeatureFlagEvaluation: Sendable, Equatable {
    /// `feature_flag.result.reason`: OpenTelemetry's well-known values.
    package enum Reason: String, Sendable, CaseIterable {
        case `static`, `default`, targetingMatch = "targeting_match", split, cached, disabled, unknown, error
    }

    /// The flag's key (`feature_flag.key`).
    package var key: String
    /// `baseline` or `variant-<index>`; nil when no variant was chosen (`feature_flag.result.variant`).
    package var variant: String?
    /// Why the value was chosen (`feature_flag.result.reason`).
    package var reason: Reason
    /// An OpenFeature error code in lower case (`flag_not_found`, `provider_not_ready`,
    /// `general`, …) when the evaluation failed (`error.type`).
    package var errorType: String?

    /// An evaluation; each parameter sets the property of the same name.
    package init(key: String, variant: String? = nil, reason: Reason, errorType: String? = nil) {
        self.key = key
        self.variant = variant
        self.reason = reason
        self.errorType = errorType
    }

    /// The variant name of a variant index: `baseline` for 0, else `variant-<index>`.
    package static func variantName(index: Int) -> String {
        index > 0 ? "variant-\(index)" : "baseline"
    }

    /// The evaluation of flag `key` that read `value` from the visitor's Experience `changes`:
    /// the `Variable` change with that key names the variant (`meta.variantIndex`): a selected
    /// variant is `targeting_match`, the baseline `default`. Without such a change a `.null`
    /// value is the error `flag_not_found`, another value `unknown`.
    package init(key: String, value: JSONValue, changes: [JSONValue]) {
        let change = changes.first { $0["type"]?.stringValue == "Variable" && $0["key"]?.stringValue == key }
        guard let change else {
            self.init(key: key, reason: value == .null ? .error : .unknown, errorType: value == .null ? "flag_not_found" : nil)
            return
        }
        let index = change["meta"]?["variantIndex"]?.numberValue?.intValue ?? 0
        self.init(key: key, variant: Self.variantName(index: index), reason: index > 0 ? .targetingMatch : .default)
    }
}
