import ContentfulDelivery
import Foundation

/// The NOTIFY payload of an invalidation: JSON `{"origin","space","environment","entry"}`
/// (`entry` absent: everything). Entry ids are at most 64 characters, so a payload stays far
/// below PostgreSQL's 8000-byte limit.
struct InvalidationMessage: Codable, Sendable, Equatable {
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
