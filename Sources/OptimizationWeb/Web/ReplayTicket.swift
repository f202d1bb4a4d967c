import OptimizationServiceFace
import OptimizationJSON
import OrderedCollections

/// A replay the app issued with a handoff page, as the page carries it to the browser: sealed by
/// a `SignedValueCodec` for the purpose ``purpose`` (so visitor-state cookies and tickets never
/// stand in for each other), expiring after the codec's lifetime.
///
/// The sealed value is `{"id": <random ticket id>, "profile": <profile id or null>, "replay":
/// {"routeKey", "events", "locale"?}}`: the replay is taken from the ticket, never from the
/// request that presents it, and it is committed only for the visitor whose state cookie carries
/// the same profile id (none for none).
///
/// **Threading.** A `Sendable` value; sealing and opening are pure (the codec is thread-safe).
public struct ReplayTicket: Sendable, Equatable {
    /// The purpose bound into every ticket's signature.
    public static let purpose = "replay-ticket"

    /// Unique per ticket (128 random bits, hex): the single-use record's key.
    public var id: String
    /// The profile id of the visitor the ticket was issued to; nil for a visitor without one.
    public var profileId: String?
    /// The events the page was evaluated with, to be committed once.
    public var replay: OptimizationHandoff.Replay

    /// A ticket with a fresh random id.
    public init(profileId: String?, replay: OptimizationHandoff.Replay) {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        self.init(id: Self.hex(high) + Self.hex(low), profileId: profileId, replay: replay)
    }

    /// A ticket with the given id.
    public init(id: String, profileId: String?, replay: OptimizationHandoff.Replay) {
        self.id = id
        self.profileId = profileId
        self.replay = replay
    }

    /// The ticket's sealed text, or nil when its events cannot be written as JSON.
    public func sealed(with codec: SignedValueCodec) -> String? {
        var replayMembers: OrderedDictionary<String, JSONValue> = ["routeKey": .string(replay.routeKey), "events": .array(replay.events)]
        if let locale = replay.locale { replayMembers["locale"] = .string(locale) }
        let value: JSONValue = ["id": .string(id), "profile": profileId.map(JSONValue.string) ?? .null, "replay": .object(replayMembers)]
        return try? codec.seal(value)
    }

    /// The ticket sealed in `text`, or nil (counted by the codec when the text does not open)
    /// for a forged, tampered, expired or foreign-purpose text or one of another shape.
    public init?(sealed text: String, codec: SignedValueCodec) {
        guard let value = codec.open(text),
              let id = value["id"]?.stringValue, !id.isEmpty,
              let profile = value["profile"], profile.isNull || profile.stringValue != nil,
              let replay = value["replay"], let routeKey = replay["routeKey"]?.stringValue,
              let events = replay["events"]?.arrayValue
        else { return nil }
        self.init(id: id, profileId: profile.stringValue, replay: .init(routeKey: routeKey, events: events, locale: replay["locale"]?.stringValue))
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
