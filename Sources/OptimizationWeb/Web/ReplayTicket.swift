import OptimizationServiceFace
import OptimizationJSON
import OrderedCollections

/// A replay the app issued with a handoff page, as the page carries it to the browser: sealed by
/// a `SignedValueCodec` for the purpose ``purpose`` (so visitor-state cookies and tickets never
/// stand in for each other), expiring after the codec's lifetime.
///
/// The sealed value is `{"id": <random ticket id>, "visitor": <visitor nonce>, "issuer"?:
/// <process nonce>, "replay": {"routeKey", "events", "locale"?}}`: the replay is taken from the
/// ticket, never from the request that presents it, and it is committed only for the visitor
/// whose verified state carries the same nonce (``VisitorState/nonce``), and, when the ticket
/// names an issuer, only by that process.
///
/// **Threading.** A `Sendable` value; sealing and opening are pure (the codec is thread-safe).
public struct ReplayTicket: Sendable, Equatable {
    /// The purpose bound into every ticket's signature.
    public static let purpose = "replay-ticket"

    /// Unique per ticket (128 random bits, hex): the single-use record's key.
    public var id: String
    /// The nonce of the visitor the ticket was issued to (``VisitorNonce``).
    public var visitorNonce: String
    /// The process that issued it and alone may commit it; nil when every replica shares the
    /// record of committed tickets.
    public var issuer: String?
    /// The events the page was evaluated with, to be committed once.
    public var replay: OptimizationHandoff.Replay

    /// A ticket with a fresh random id.
    public init(visitorNonce: String, issuer: String? = nil, replay: OptimizationHandoff.Replay) {
        self.init(id: Self.randomHex(), visitorNonce: visitorNonce, issuer: issuer, replay: replay)
    }

    /// A ticket with the given id.
    public init(id: String, visitorNonce: String, issuer: String? = nil, replay: OptimizationHandoff.Replay) {
        self.id = id
        self.visitorNonce = visitorNonce
        self.issuer = issuer
        self.replay = replay
    }

    /// The ticket's sealed text, or nil when its events cannot be written as JSON or the text
    /// would be longer than the codec opens (a ticket that could never be committed).
    public func sealed(with codec: SignedValueCodec) -> String? {
        var replayMembers: OrderedDictionary<String, JSONValue> = ["routeKey": .string(replay.routeKey), "events": .array(replay.events)]
        if let locale = replay.locale { replayMembers["locale"] = .string(locale) }
        var members: OrderedDictionary<String, JSONValue> = ["id": .string(id), "visitor": .string(visitorNonce)]
        if let issuer { members["issuer"] = .string(issuer) }
        members["replay"] = .object(replayMembers)
        guard let text = try? codec.seal(.object(members)), text.utf8.count <= codec.maximumLength else { return nil }
        return text
    }

    /// The ticket sealed in `text`, or nil (counted by the codec when the text does not open)
    /// for a forged, tampered, expired or foreign-purpose text or one of another shape.
    public init?(sealed text: String, codec: SignedValueCodec) {
        guard let value = codec.open(text),
              let id = value["id"]?.stringValue, !id.isEmpty,
              let visitor = value["visitor"]?.stringValue, VisitorNonce.isWellFormed(visitor),
              let replay = value["replay"], let routeKey = replay["routeKey"]?.stringValue,
              let events = replay["events"]?.arrayValue
        else { return nil }
        let issuer = value["issuer"]
        guard issuer == nil || issuer?.stringValue != nil else { return nil }
        self.init(
            id: id, visitorNonce: visitor, issuer: issuer?.stringValue,
            replay: .init(routeKey: routeKey, events: events, locale: replay["locale"]?.stringValue))
    }

    /// 128 random bits as 32 lowercase hex digits.
    static func randomHex() -> String {
        var generator = SystemRandomNumberGenerator()
        return hex(generator.next()) + hex(generator.next())
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
