extension OptimizationReplayTickets {
    /// What ``commit(_:for:visitorState:logger:)`` did, and the HTTP status that tells it.
    /// An immutable `Sendable` value.
    public enum CommitOutcome: Sendable, Equatable {
        /// Committed: 204.
        case committed
        /// Forged, tampered, expired, of another purpose, or issued by another process when the
        /// ledger is this process's alone: 403, nothing sent.
        case invalidTicket
        /// Issued to another visitor (the state carries no nonce or another one): 403, nothing sent.
        case otherVisitor
        /// The visitor's consent blocks every event of the replay now: 403, nothing sent.
        case blockedByConsent
        /// Committed before (by this process, or by any replica with a shared ledger): 409,
        /// nothing sent.
        case alreadyCommitted
        /// The ledger is full of unexpired ids: 503, nothing sent.
        case ledgerFull
        /// The ledger could not be reached (a database away): 503, nothing sent; the ticket is
        /// not spent.
        case ledgerUnavailable
        /// The library refused the replay (not a replay it can commit): 422.
        case invalidReplay
        /// The Experience API did not take it (failure, timeout, open circuit): 502.
        case notDelivered

        /// The HTTP status code the replay route answers with (204, 403, 409, 422, 502 or 503).
        public var statusCode: Int {
            switch self {
            case .committed: 204
            case .invalidTicket, .otherVisitor, .blockedByConsent: 403
            case .alreadyCommitted: 409
            case .ledgerFull, .ledgerUnavailable: 503
            case .invalidReplay: 422
            case .notDelivered: 502
            }
        }
    }
}
