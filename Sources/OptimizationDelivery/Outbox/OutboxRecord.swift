/// One accepted event as the outbox keeps it: which queue it belongs to, the event JSON exactly
/// as the caller gave it, and what delivery and erasure need to know without parsing it.
public struct OutboxEvent: Sendable, Equatable {
    /// The queue (and so the API) the event goes to.
    public var queue: EventQueueKind
    /// The event's `messageId` (non-empty, at most 1,024 UTF-8 bytes): the key of
    /// ``DurableOutbox/acknowledge(messageIds:)`` and of re-sends.
    public var messageId: String
    /// The profile the event belongs to, if known (at most 1,024 UTF-8 bytes): the key of
    /// ``DurableOutbox/eraseProfile(_:)``.
    public var profileId: String?
    /// The consent the event was built with (`context.gdpr.isConsentGiven`).
    public var consent: Bool
    /// When the event was accepted, in milliseconds since the Unix epoch, within
    /// ``validAcceptedAt`` (an append outside it throws); nil uses the outbox's clock at append
    /// time. The time to live counts from it.
    public var acceptedAt: Double?

    /// The instants an `acceptedAt` may name: from the Unix epoch to the last instant a
    /// JavaScript `Date` can hold (8.64e15 ms, in the year 275760). Timers computed from it stay
    /// representable as a `Duration`.
    public static let validAcceptedAt: ClosedRange<Double> = 0...8.64e15
    /// The event JSON, byte for byte as it must be sent again.
    public var payload: [UInt8]

    /// An event to append; each parameter sets the property of the same name.
    public init(
        queue: EventQueueKind, messageId: String, profileId: String? = nil, consent: Bool, acceptedAt: Double? = nil,
        payload: [UInt8]
    ) {
        self.queue = queue
        self.messageId = messageId
        self.profileId = profileId
        self.consent = consent
        self.acceptedAt = acceptedAt
        self.payload = payload
    }
}

/// An event stored in the outbox, with the sequence number the outbox gave it.
public struct OutboxRecord: Sendable, Equatable {
    /// Position in the outbox: strictly increasing in append order across both queues, unique
    /// for the life of the directory's contents (it may restart after a ``DurableOutbox/purge()``
    /// or when the directory is empty at open).
    public let sequence: UInt64
    /// The queue the event goes to.
    public let queue: EventQueueKind
    /// The event's `messageId`.
    public let messageId: String
    /// The profile the event belongs to, if the caller gave one.
    public let profileId: String?
    /// The consent the event was built with.
    public let consent: Bool
    /// When it was accepted: milliseconds since the Unix epoch.
    public let acceptedAt: Double
    /// The event JSON exactly as appended.
    public let payload: [UInt8]

    /// A stored event; the outbox builds these (tests and custom stores may too).
    public init(
        sequence: UInt64, queue: EventQueueKind, messageId: String, profileId: String?, consent: Bool,
        acceptedAt: Double, payload: [UInt8]
    ) {
        self.sequence = sequence
        self.queue = queue
        self.messageId = messageId
        self.profileId = profileId
        self.consent = consent
        self.acceptedAt = acceptedAt
        self.payload = payload
    }
}
