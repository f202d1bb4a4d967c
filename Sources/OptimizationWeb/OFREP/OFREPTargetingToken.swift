import OptimizationJSON

/// The sealed targeting token an application issues for its own visitor, so an OpenFeature
/// client can ask the OFREP routes for that visitor's flags without holding the visitor's
/// profile id as authority: a profile id is readable (in a signed state cookie, in a handoff
/// page) and guessable, a token is signed by the application and expires.
///
/// Sealed by a `SignedValueCodec` for the purpose ``purpose`` (so visitor-state cookies and
/// replay tickets never stand in for a token): the value is `{"profile": <profile id>}`. An
/// ``OFREPEvaluator`` configured with ``OFREPConfiguration/TargetingKeys/sealedTokens(_:)``
/// reads `context.targetingKey` as such a token.
///
/// **Threading.** Pure functions; the codec is thread-safe.
public enum OFREPTargetingToken {
    /// The purpose bound into every token's signature.
    public static let purpose = "ofrep-targeting"
    /// The longest token text read, in UTF-8 bytes.
    public static let maximumLength = 1_024

    /// The token of the visitor whose profile id is `profileId`, or nil when `profileId` is not a
    /// profile id the evaluator accepts (1–256 of `A–Z a–z 0–9 . _ : -`, not only dots).
    /// - Parameters:
    ///   - profileId: the visitor's Experience API profile id.
    ///   - codec: seals the token; its purpose should be ``purpose`` and its lifetime bounds how
    ///     long the token is honoured.
    public static func seal(profileId: String, with codec: SignedValueCodec) -> String? {
        guard OFREPContext.isProfileId(profileId) else { return nil }
        return try? codec.seal(["profile": .string(profileId)])
    }

    /// The profile id sealed in `token`, or nil for a forged, tampered, expired, foreign-purpose
    /// or over-long text, or one of another shape.
    public static func profileId(openedFrom token: String, with codec: SignedValueCodec) -> String? {
        guard token.utf8.count <= maximumLength, let value = codec.open(token),
              let profileId = value["profile"]?.stringValue, OFREPContext.isProfileId(profileId)
        else { return nil }
        return profileId
    }
}
