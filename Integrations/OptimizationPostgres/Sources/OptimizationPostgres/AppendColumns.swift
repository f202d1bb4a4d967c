import Optimization
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The events of one append transaction as the columns of its `unnest` (PostgresNIO binds arrays
/// of non-optional values: a missing profile is `""` with `hasProfile` false).
struct AppendColumns: Sendable {
    let queues: [String]
    let messageIds: [String]
    let profileIds: [String]
    let hasProfile: [Bool]
    let consents: [Bool]
    let acceptedAts: [Double]
    let payloads: [ByteBuffer]

    /// The columns of `events` (their `acceptedAt` set).
    init(_ events: [OutboxEvent]) {
        queues = events.map(\.queue.rawValue)
        messageIds = events.map(\.messageId)
        profileIds = events.map { $0.profileId ?? "" }
        hasProfile = events.map { $0.profileId != nil }
        consents = events.map(\.consent)
        acceptedAts = events.map { $0.acceptedAt ?? 0 }
        payloads = events.map { ByteBuffer(bytes: $0.payload) }
    }
}
