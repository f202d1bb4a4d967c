import OptimizationJSON
import OptimizationTransport
/// The result of ``ContentfulDeliverySource/entries(ids:locale:)``.
public struct ContentfulEntryBatch: Sendable {
    /// The entries found, in the order their ids were asked (duplicates asked once).
    public let entries: [ContentfulEntry]
    /// The ids asked that the space does not have (or has not published), in asked order.
    public let missingIds: [String]

    /// A batch of `entries` found and `missingIds` not found.
    public init(entries: [ContentfulEntry], missingIds: [String]) {
        self.entries = entries
        self.missingIds = missingIds
    }

    /// The entry with `sys.id` `id`, if it was found.
    public subscript(id: String) -> ContentfulEntry? {
        entries.first { $0.id == id }
    }
}
