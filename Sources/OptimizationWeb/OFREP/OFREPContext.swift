import OptimizationJSON

/// The evaluation context of an OFREP request, as an ``OFREPEvaluator`` accepts it:
/// `{"context": {"targetingKey": <sealed targeting token or profile id>, "consent"?: Bool,
/// "locale"?: String, …}}`. Other members of the context are ignored.
struct OFREPContext: Sendable, Equatable {
    /// The visitor's profile id (opened from a sealed targeting token, or the key itself when the
    /// evaluator trusts profile ids).
    var profileId: String
    /// The visitor's event consent: true, false or undecided (nil).
    var consent: Bool?
    /// The locale of the evaluation; nil uses the service's.
    var locale: String?

    struct Failure: Error, Equatable {
        var code: OFREPErrorCode
        var details: String
    }

    /// Reads a request's body.
    /// - Parameters:
    ///   - targetingKeys: what the targeting key is taken to be.
    /// - Returns: the context, or the failure with its OFREP error code: `PARSE_ERROR` (too
    ///   large, not JSON, not an object), `TARGETING_KEY_MISSING`, `INVALID_CONTEXT` (among
    ///   others: a key that is not a valid token, or not a profile id).
    static func read(_ request: OFREPRequest, maximumBytes: Int, targetingKeys: OFREPConfiguration.TargetingKeys) -> Result<OFREPContext, Failure> {
        let body = request.body
        guard !request.bodyExceedsLimit, body.count <= maximumBytes else { return .failure(.init(code: .parseError, details: "the body is larger than \(maximumBytes) bytes")) }
        guard let value = try? JSONValue(jsonData: body, maximumDepth: 64), let object = value.objectValue else {
            return .failure(.init(code: .parseError, details: "the body is not a JSON object"))
        }
        guard let contextValue = object["context"], !contextValue.isNull else {
            return .failure(.init(code: .targetingKeyMissing, details: "the request has no context"))
        }
        guard let context = contextValue.objectValue else { return .failure(.init(code: .invalidContext, details: "context is not an object")) }
        guard let keyValue = context["targetingKey"], !keyValue.isNull else {
            return .failure(.init(code: .targetingKeyMissing, details: "context.targetingKey is missing"))
        }
        guard let key = keyValue.stringValue else { return .failure(.init(code: .invalidContext, details: "context.targetingKey is not a string")) }
        guard !key.isEmpty else { return .failure(.init(code: .targetingKeyMissing, details: "context.targetingKey is empty")) }
        let profileId: String
        switch targetingKeys {
        case .sealedTokens(let codec):
            guard let opened = OFREPTargetingToken.profileId(openedFrom: key, with: codec) else {
                return .failure(.init(code: .invalidContext, details: "context.targetingKey is not a valid targeting token"))
            }
            profileId = opened
        case .profileIds:
            guard isProfileId(key) else {
                return .failure(.init(
                    code: .invalidContext,
                    details: "context.targetingKey is not a profile id (1 to \(OFREPEvaluator.maximumTargetingKeyLength) of A-Z a-z 0-9 . _ : -, not only dots)"))
            }
            profileId = key
        }
        var consent: Bool?
        if let value = context["consent"], !value.isNull {
            guard let flag = value.boolValue else { return .failure(.init(code: .invalidContext, details: "context.consent is not a boolean")) }
            consent = flag
        }
        var locale: String?
        if let value = context["locale"], !value.isNull {
            guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= 35 else {
                return .failure(.init(code: .invalidContext, details: "context.locale is not a locale string"))
            }
            locale = text
        }
        return .success(OFREPContext(profileId: profileId, consent: consent, locale: locale))
    }

    /// Profile ids are opaque ASCII tokens: letters, digits, `.`, `_`, `:` and `-`, not only dots
    /// (`.` and `..` would be path segments of the Experience API's URL).
    static func isProfileId(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= OFREPEvaluator.maximumTargetingKeyLength && text.utf8.contains { $0 != 0x2E } && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x3A || byte == 0x2D
        }
    }
}
