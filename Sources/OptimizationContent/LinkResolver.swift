import OptimizationJSON
import OrderedCollections

/// Replaces entry links in a value by the linked entries of a CDA collection, for output.
///
/// Cycle-safe: a link to an entry that is already being expanded on the current path (a
/// rich-text embed that points back, a back-reference) stays a link. Expansion also stops at
/// ``maximumIncludeDepth`` nested entries (the CDA's own include limit) and after
/// ``maximumExpandedEntries`` expansions, so shared sub-graphs cannot blow up the output.
package struct LinkResolver {
    package static let maximumIncludeDepth = 10
    package static let maximumExpandedEntries = 10_000

    package let entriesById: [String: JSONValue]
    private var path: Set<String> = []
    private var expanded = 0

    package init(entriesById: [String: JSONValue]) {
        self.entriesById = entriesById
    }

    /// `value` with every resolvable entry link replaced.
    package func resolve(_ value: JSONValue) -> JSONValue {
        var resolver = self
        if let id = value["sys"]?["id"]?.stringValue { resolver.path.insert(id) }
        return resolver.walk(value)
    }

    /// The id of an unresolved entry link (`{"sys":{"type":"Link","linkType":"Entry","id":…}}`).
    package static func entryLinkID(_ value: JSONValue) -> String? {
        guard let sys = value["sys"], sys["type"]?.stringValue == "Link",
              sys["linkType"]?.stringValue == "Entry"
        else { return nil }
        return sys["id"]?.stringValue
    }

    private mutating func walk(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array(let elements):
            return .array(elements.map { walk($0) })
        case .object(let members):
            if let id = Self.entryLinkID(value) {
                guard let target = entriesById[id], !path.contains(id), path.count <= Self.maximumIncludeDepth,
                      expanded < Self.maximumExpandedEntries
                else { return value }
                expanded += 1
                path.insert(id)
                defer { path.remove(id) }
                return walk(target)
            }
            var result = OrderedDictionary<String, JSONValue>()
            result.reserveCapacity(members.count)
            for (key, member) in members {
                // `sys` never holds entry links worth expanding (contentType, space, environment).
                result[key] = key == "sys" ? member : walk(member)
            }
            return .object(result)
        default:
            return value
        }
    }
}
