import OptimizationContent

/// What a server keeps about a visitor on the visitor's side, sealed by ``VisitorStateCodec``:
/// the profile id, the consent choice, the selections handed from one page to the next, and the
/// nonce that binds the app's own signed values (replay tickets) to this visitor.
///
/// Every field is optional: nil means "not known" (a new visitor has none). A plain value: it
/// carries no expiry or signature; those belong to the sealed text.
///
/// A state that ``VisitorStateCodec/openWithExpiry(_:)`` opened also remembers the text it was
/// opened from, so that sealing it again unchanged (a renewal) encodes only the new expiry; it
/// is not part of the state: `==` compares the four fields only, and changing a field just
/// makes the next seal encode everything.
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
    /// The text this state was opened from and its payload, when it was opened: not compared by
    /// `==`; a seal copies from it only what matches the state byte for byte
    /// (``SignedValueCodec/OpenedPayload``). Keeps the two strings alive as long as the state.
    var opened: SignedValueCodec.OpenedPayload?

    /// Creates a state; every field defaults to unknown.
    public init(profileId: String? = nil, consent: Bool? = nil, selections: SelectedOptimizations? = nil, nonce: String? = nil) {
        self.profileId = profileId
        self.consent = consent
        self.selections = selections
        self.nonce = nonce
    }

    /// Whether the four fields are equal (where a state was opened from does not count).
    public static func == (lhs: VisitorState, rhs: VisitorState) -> Bool {
        lhs.profileId == rhs.profileId && lhs.consent == rhs.consent && lhs.selections == rhs.selections && lhs.nonce == rhs.nonce
    }
}
