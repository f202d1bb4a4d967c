import OptimizationJSON

/// One Insights event ready to send: the wire event the shared core built and validated, and
/// the profile it belongs to, both as JSON text (they are sent as they are: no tree, no second
/// serialization).
package struct InsightsEvent: Sendable, Equatable {
    /// `profile.id` ("" when the profile has none): events are batched per profile id.
    package var profileId: String
    /// The profile object's JSON text (sent as the batch's `profile`).
    package var profileJSON: String
    /// The event's `messageId` (what outboxes acknowledge).
    package var messageId: String
    /// Whether the event says its visitor consented (`context.gdpr.isConsentGiven`).
    package var consent: Bool
    /// The event object's JSON text.
    package var eventJSON: String

    /// Creates an event from its parts (the caller vouches for the texts being JSON objects).
    package init(profileId: String, profileJSON: String, messageId: String, consent: Bool, eventJSON: String) {
        self.profileId = profileId
        self.profileJSON = profileJSON
        self.messageId = messageId
        self.consent = consent
        self.eventJSON = eventJSON
    }

    /// Reads a `{"profile": {…}, "event": {…, "messageId": "…"}}` item (the service's and the
    /// outboxes' stored form).
    /// - Throws: ``InsightsEventError`` naming what is wrong (never quoting the text, which
    ///   carries visitor data).
    package init(itemJSON text: String) throws(InsightsEventError) {
        guard let tape = JSONTape.scan(text) else { throw .notJSON }
        let root = JSONTape.rootNode
        guard tape.kind(of: root) == .object else { throw .wrongShape("the item is not an object") }
        guard let profile = tape.member("profile", of: root), tape.kind(of: profile) == .object else {
            throw .wrongShape("the item has no profile object")
        }
        guard let event = tape.member("event", of: root), tape.kind(of: event) == .object else {
            throw .wrongShape("the item has no event object")
        }
        guard let messageId = Self.messageId(of: event, in: tape) else { throw .wrongShape("the event has no messageId") }
        self.init(
            profileId: tape.member("id", of: profile).flatMap { tape.string(at: $0) } ?? "",
            profileJSON: tape.text(of: profile), messageId: messageId, consent: Self.consent(of: event, in: tape),
            eventJSON: tape.text(of: event))
    }

    /// The `{"profile": …, "event": …}` item text (what outboxes store).
    package var itemJSON: String {
        #"{"profile":"# + profileJSON + #","event":"# + eventJSON + "}"
    }

    /// The stored form of an event held for the visitor's first profile: `{"profile": null, …}`.
    var heldItemJSON: String {
        #"{"profile":null,"event":"# + eventJSON + "}"
    }

    /// A stored item: an event with its profile, or (profile `null`) one held for the visitor's
    /// first profile; nil when it is neither.
    static func stored(_ text: String) -> (event: InsightsEvent, held: Bool)? {
        if let event = try? InsightsEvent(itemJSON: text) { return (event, false) }
        guard let tape = JSONTape.scan(text), let profile = tape.member("profile", of: JSONTape.rootNode), tape.kind(of: profile) == .null,
              let event = tape.member("event", of: JSONTape.rootNode), tape.kind(of: event) == .object,
              let messageId = messageId(of: event, in: tape)
        else { return nil }
        let held = InsightsEvent(
            profileId: "", profileJSON: "null", messageId: messageId, consent: consent(of: event, in: tape), eventJSON: tape.text(of: event))
        return (held, true)
    }

    /// Reads an event object's `messageId` and consent flag (a client's event, whose profile the
    /// queue knows).
    /// - Throws: ``InsightsEventError`` when the text is not an event object with a `messageId`.
    package static func parts(ofEvent text: String) throws(InsightsEventError) -> (messageId: String, consent: Bool) {
        guard let tape = JSONTape.scan(text) else { throw .notJSON }
        let event = JSONTape.rootNode
        guard tape.kind(of: event) == .object else { throw .wrongShape("the event is not an object") }
        guard let messageId = messageId(of: event, in: tape) else { throw .wrongShape("the event has no messageId") }
        return (messageId, consent(of: event, in: tape))
    }

    /// The event object's non-empty `messageId`, or nil.
    private static func messageId(of event: Int, in tape: JSONTape) -> String? {
        guard let id = tape.member("messageId", of: event).flatMap({ tape.string(at: $0) }), !id.isEmpty else { return nil }
        return id
    }

    /// The event object's `context.gdpr.isConsentGiven`; false when missing or not a boolean.
    private static func consent(of event: Int, in tape: JSONTape) -> Bool {
        tape.member("context", of: event).flatMap { tape.member("gdpr", of: $0) }
            .flatMap { tape.member("isConsentGiven", of: $0) }.flatMap { tape.bool(at: $0) } ?? false
    }
}

/// Why a text is not an Insights item.
package enum InsightsEventError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not one JSON value.
    case notJSON
    /// The value is not `{profile: {…}, event: {messageId, …}}`; the message says what is missing.
    case wrongShape(String)

    package var description: String {
        switch self {
        case .notJSON: return "the item is not one JSON value"
        case .wrongShape(let message): return message
        }
    }
}
