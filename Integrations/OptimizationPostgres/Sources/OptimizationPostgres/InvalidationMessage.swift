import Optimization
import Foundation

/// The NOTIFY payload of an invalidation: JSON `{"origin","space","environment","entry"}`
/// (`entry` absent: everything). Contentful's ids are at most 64 characters, so a real payload
/// stays far below PostgreSQL's limit (``maximumPayloadBytes``); a longer one is never sent.
struct InvalidationMessage: Codable, Sendable, Equatable {
    /// The longest NOTIFY payload PostgreSQL accepts (built with the default 8 kB pages): it
    /// must be shorter than 8000 bytes.
    static let maximumPayloadBytes = 7999

    /// The ``OptimizationDatabase/replicaId`` that sent it.
    var origin: String
    var space: String
    var environment: String
    var entry: String?

    init(origin: String, invalidation: ContentfulInvalidation) {
        self.origin = origin
        space = invalidation.spaceId
        environment = invalidation.environment
        entry = invalidation.entryId
    }

    var invalidation: ContentfulInvalidation {
        ContentfulInvalidation(spaceId: space, environment: environment, entryId: entry)
    }

    func encoded() -> String {
        String(decoding: (try? JSONEncoder().encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// The message in `payload`; nil when it is not one.
    static func decode(_ payload: String) -> InvalidationMessage? {
        try? JSONDecoder().decode(InvalidationMessage.self, from: Data(payload.utf8))
    }
}
