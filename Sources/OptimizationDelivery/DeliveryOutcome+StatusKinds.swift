import OptimizationJSON
import OrderedCollections

extension DeliveryOutcome {
    /// ``kind(ofStatus:)`` as the JSON table a service engine's `__service.configure` takes
    /// (`statusKinds`): `{"fallback": kind, "statuses": {"<status>": kind}}`, where `fallback` is
    /// the kind of a status outside 100–599 and `statuses` lists every status 100–599 whose kind
    /// differs from it, in ascending order. The shared JavaScript classifies no status itself:
    /// the kind of an Experience answer it interprets comes from this table. Built once;
    /// thread-safe.
    package static let statusKindTable: JSONValue = {
        let fallback = kind(ofStatus: 0)
        var statuses = OrderedDictionary<String, JSONValue>()
        for status in 100...599 where kind(ofStatus: status) != fallback {
            statuses[String(status)] = .string(kind(ofStatus: status))
        }
        return ["fallback": .string(fallback), "statuses": .object(statuses)]
    }()
}
