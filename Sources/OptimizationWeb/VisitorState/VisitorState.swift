import OptimizationContent

/// What a server keeps about a visitor on the visitor's side, sealed by ``VisitorStateCodec``:
/// the profile id, the consent choice, the selections handed from one page to the next, and the
/// nonce that binds the app's own signed values (replay tickets) to this visitor.
///
/// Every field is optional: nil means "not known" (a new visitor has none). A plain value: it
/// carries no expiry or signature; those belong to the sealed text.
public struct VisitorState: Sendable, Equatable {
    /// The Experience API profile id of the visitor, if known.
    public var profileId: String?
    /// The visitor's consent choice: true (accepted), false (declined) or nil (not asked).
    public var consent: Bool?
    /// The selections of the visitor's last evaluated page, for pages that render without an
    /// Experience call or while one fails.
    public var selections: SelectedOptimizations?
    /// A random value the app issued to this visitor (``VisitorNonce``), which tickets the app
    /// seals for the visitor carry: only the browser holding this state can present them. Never
    /// sent to the Optimization APIs; nil until the app first needs one.
    public var nonce: String?

    /// Creates a state; every field defaults to unknown.
    public init(profileId: String? = nil, consent: Bool? = nil, selections: SelectedOptimizations? = nil, nonce: String? = nil) {
        self.profileId = profileId
        self.consent = consent
        self.selections = selections
        self.nonce = nonce
    }
}
