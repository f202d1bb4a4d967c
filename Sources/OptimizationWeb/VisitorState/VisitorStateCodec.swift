import CoreMetrics
import OptimizationJSON
import HostPlatform
import OptimizationContent

/// Seals a ``VisitorState`` into one signed, expiring, cookie-safe text and opens it again: the
/// visitor-state format every integration shares (a Hummingbird or Vapor app writes it as a
/// cookie value), so a visitor cannot choose their profile id, consent or selections.
///
/// The text is a ``SignedValueCodec`` value (format version `v1`) for the purpose
/// ``purpose`` (`visitor-state`), whose sealed value is a JSON object with, each only when
/// known: `"p"` (the profile id, a string), `"c"` (consent, a boolean), `"s"` (the selections,
/// a JSON array as the Experience API returns them) and `"n"` (the visitor's nonce, a string of
/// ``VisitorNonce`` form). A value that opens but has another shape
/// (a member of the wrong type) is refused and counted as `malformed`.
///
/// Browsers keep a cookie up to about 4 KB: callers writing a cookie should check the length of
/// ``seal(_:)``'s text (selections grow it) and leave the selections out when it is too long.
///
/// A missing value is the caller's nil; a tampered, foreign-key, other-purpose, expired or
/// malformed value opens as nil and is counted (``rejectedCount``, and the swift-metrics counter
/// `optimization_visitor_state_rejected_total` with `purpose` `visitor-state` and `reason`). Treat
/// nil as a new visitor: nothing of it is trusted. Thread-safe; copies share their count.
public struct VisitorStateCodec: Sendable {
    /// The purpose bound into every visitor-state value.
    public static let purpose = "visitor-state"
    /// The longest profile id kept, in UTF-8 bytes; a state with a longer one is refused.
    public static let maximumProfileIdLength = 256

    private let codec: SignedValueCodec

    /// Creates a codec.
    /// - Parameters:
    ///   - keys: the first signs; all verify (rotation: see ``VisitorStateKeys``).
    ///   - lifetime: how long a sealed state opens after it was sealed; clamped to 1 ms … 100 years.
    ///   - clock: the time of sealing and expiry; default `SystemClock` (wall-clock time).
    ///   - metricsFactory: receives `optimization_visitor_state_rejected_total`; nil (the
    ///     default) uses `MetricsSystem.factory`.
    public init(keys: VisitorStateKeys, lifetime: Duration, clock: any HostClock = SystemClock(), metricsFactory: (any MetricsFactory)? = nil) {
        codec = SignedValueCodec(keys: keys, purpose: Self.purpose, lifetime: lifetime, maximumLength: 16_384, clock: clock, metricsFactory: metricsFactory)
    }

    /// How long a sealed state opens after it was sealed.
    public var lifetime: Duration {
        codec.lifetime
    }

    /// The sealed text of `state`, signed with the first key, expiring ``lifetime`` from now.
    /// Never fails; a profile id longer than ``maximumProfileIdLength`` and a nonce not of
    /// ``VisitorNonce`` form are left out.
    ///
    /// Always sealed anew (a new expiry and signature), also for a state opened and not changed
    /// (a renewal): such a state's value is still written and compared with the text it was
    /// opened from, and only the base64url of the expiry is encoded again, the rest copied.
    public func seal(_ state: VisitorState) -> String {
        // {"p":<id>,"c":<consent>,"s":<selections>}, each member only when known, in one string.
        let profileId = state.profileId.flatMap { $0.utf8.count <= Self.maximumProfileIdLength ? $0 : nil }
        var capacity = 2
        if let profileId { capacity += 7 + profileId.utf8.count + 8 }  // escapes may need more
        if state.consent != nil { capacity += 10 }
        if let selections = state.selections { capacity += 5 + selections.jsonText.utf8.count }
        let nonce = state.nonce.flatMap { VisitorNonce.isWellFormed($0) ? $0 : nil }
        if let nonce { capacity += 7 + nonce.utf8.count }
        var text = "{"
        text.reserveCapacity(capacity)
        var separator = ""
        if let profileId {
            text += "\"p\":"
            JSONValue.appendStringLiteral(profileId, to: &text)
            separator = ","
        }
        if let consent = state.consent {
            text += separator
            text += consent ? "\"c\":true" : "\"c\":false"
            separator = ","
        }
        if let selections = state.selections {
            text += separator
            text += "\"s\":"
            text += selections.jsonText
            separator = ","
        }
        if let nonce {
            // Base64url characters only: no escaping needed.
            text += separator
            text += "\"n\":\""
            text += nonce
            text += "\""
        }
        text += "}"
        return codec.seal(valueText: text, reusing: state.opened)
    }

    /// The state sealed in `text`, or nil (counted) when it is tampered, signed by no listed key,
    /// sealed for another purpose, expired, malformed or longer than 16 KiB.
    public func open(_ text: String) -> VisitorState? {
        openWithExpiry(text)?.state
    }

    /// ``open(_:)``, with the seal's expiry: when the text stops opening, in milliseconds since
    /// the Unix epoch on the codec's clock (to seal the state again before it lapses).
    ///
    /// The payload is validated as JSON but only indexed (the state's members recorded, nothing
    /// below them): the selections keep the text that was sealed (what ``seal(_:)`` wrote from an
    /// earlier `SelectedOptimizations`) and build their values when first read.
    public func openWithExpiry(_ text: String) -> (state: VisitorState, expiresAt: Double)? {
        guard let (payload, value, expiresAt) = codec.openTapeWithExpiry(text, recordedDepth: 1) else { return nil }
        guard payload.kind(of: value) == .object else { return refused() }
        var state = VisitorState()
        if let member = payload.member("p", of: value) {
            guard let id = payload.string(at: member), id.utf8.count <= Self.maximumProfileIdLength else { return refused() }
            state.profileId = id
        }
        if let member = payload.member("c", of: value) {
            guard let consent = payload.bool(at: member) else { return refused() }
            state.consent = consent
        }
        if let member = payload.member("n", of: value) {
            guard let nonce = payload.string(at: member), VisitorNonce.isWellFormed(nonce) else { return refused() }
            state.nonce = nonce
        }
        if let member = payload.member("s", of: value) {
            // Verified, so written by `seal` from an earlier `SelectedOptimizations`: its text as is.
            guard let selections = SelectedOptimizations(writtenArrayAt: member, of: payload) else { return refused() }
            state.selections = selections
        }
        // Other members are a later version's: ignored.
        state.opened = SignedValueCodec.OpenedPayload(sealedText: text, payload: payload.text)
        return (state, expiresAt)
    }

    /// Whether a state whose seal expires at `expiresAt` (from ``openWithExpiry(_:)``) has less
    /// than half the codec's ``lifetime`` left on its clock: time to seal it again, so that a
    /// returning visitor's state is renewed at most once per half lifetime instead of lapsing a
    /// lifetime after it last changed.
    public func isRenewalDue(expiresAt: Double) -> Bool {
        codec.isRenewalDue(expiresAt: expiresAt)
    }

    /// How many texts ``open(_:)`` refused since this codec was created (copies share it).
    public var rejectedCount: Int {
        codec.rejectedCount
    }

    private func refused<Opened>() -> Opened? {
        codec.recordMalformed()
        return nil
    }
}
