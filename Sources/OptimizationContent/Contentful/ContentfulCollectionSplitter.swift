import OptimizationJSON
import OptimizationTransport
import OrderedCollections

/// Turns one CDA collection response into one prepared `ContentfulEntry` per item, each in
/// collection form (`items: [item]` plus only the includes reachable from it), so every entry
/// is cached, keyed and transferred to engines on its own.
package enum ContentfulCollectionSplitter {
    /// The prepared entries of `body`, in the response's item order. A one-item response is
    /// used as is (no re-serialization).
    /// - Throws: ``ContentfulDeliveryError/invalidResponse(_:)`` when `body` is not a collection
    ///   the resolver accepts.
    static func entries(in body: String, includeDepth: Int) throws(ContentfulDeliveryError) -> [ContentfulEntry] {
        let document: JSONValue
        do {
            document = try JSONValue(jsonText: body)
        } catch {
            throw .invalidResponse("\(error)")
        }
        guard let items = document["items"]?.arrayValue else {
            throw .invalidResponse("the answer has no \"items\" array")
        }
        if items.isEmpty { return [] }
        if items.count == 1 {
            do {
                return [try ContentfulEntry(jsonData: Array(body.utf8))]
            } catch {
                throw .invalidResponse("\(error)")
            }
        }
        var entries: [String: JSONValue] = [:]
        var assets: [String: JSONValue] = [:]
        for entry in items + (document["includes"]?["Entry"]?.arrayValue ?? []) {
            if let id = entry["sys"]?["id"]?.stringValue, entries[id] == nil { entries[id] = entry }
        }
        for asset in document["includes"]?["Asset"]?.arrayValue ?? [] {
            if let id = asset["sys"]?["id"]?.stringValue { assets[id] = asset }
        }
        let errors = document["errors"]?.arrayValue ?? []
        var prepared: [ContentfulEntry] = []
        prepared.reserveCapacity(items.count)
        for item in items {
            let (linkedEntries, linkedAssets, missing) = reachable(from: item, depth: includeDepth, entries: entries, assets: assets)
            var collection: OrderedDictionary<String, JSONValue> = [
                "sys": ["type": "Array"], "total": 1, "skip": 0, "limit": 1, "items": [item],
            ]
            var includes: OrderedDictionary<String, JSONValue> = [:]
            if !linkedEntries.isEmpty { includes["Entry"] = .array(linkedEntries) }
            if !linkedAssets.isEmpty { includes["Asset"] = .array(linkedAssets) }
            if !includes.isEmpty { collection["includes"] = .object(includes) }
            let itemErrors = errors.filter { missing.contains($0["details"]?["id"]?.stringValue ?? "") }
            if !itemErrors.isEmpty { collection["errors"] = .array(itemErrors) }
            do {
                prepared.append(try ContentfulEntry(json: .object(collection)))
            } catch {
                throw .invalidResponse("\(error)")
            }
        }
        return prepared
    }

    /// Entries and assets linked from `item` within `depth` levels, and ids of links with no target.
    private static func reachable(
        from item: JSONValue, depth: Int, entries: [String: JSONValue], assets: [String: JSONValue]
    ) -> ([JSONValue], [JSONValue], Set<String>) {
        var seen: Set<String> = [item["sys"]?["id"]?.stringValue ?? ""]
        var linkedEntries: [JSONValue] = [], linkedAssets: [JSONValue] = []
        var missing: Set<String> = []
        var frontier = [item]
        for _ in 0..<max(depth, 0) where !frontier.isEmpty {
            var next: [JSONValue] = []
            for resource in frontier {
                for (type, id) in links(in: resource["fields"] ?? .null) where !seen.contains(type + ":" + id) && !(type == "Entry" && seen.contains(id)) {
                    seen.insert(type == "Entry" ? id : type + ":" + id)
                    if type == "Entry", let target = entries[id] {
                        linkedEntries.append(target)
                        next.append(target)
                    } else if type == "Asset", let target = assets[id] {
                        linkedAssets.append(target)
                    } else {
                        missing.insert(id)
                    }
                }
            }
            frontier = next
        }
        return (linkedEntries, linkedAssets, missing)
    }

    /// `(linkType, id)` of every Entry/Asset link in `value`, in document order.
    package static func links(in value: JSONValue) -> [(String, String)] {
        switch value {
        case .array(let elements):
            return elements.flatMap { links(in: $0) }
        case .object(let members):
            if let sys = value["sys"], sys["type"]?.stringValue == "Link",
               let type = sys["linkType"]?.stringValue, type == "Entry" || type == "Asset",
               let id = sys["id"]?.stringValue {
                return [(type, id)]
            }
            return members.values.flatMap { links(in: $0) }
        default:
            return []
        }
    }

    /// `id@revision` of the item and of every included entry and asset, sorted: equal for two
    /// fetches of unchanged content (entries are immutable per `sys.id` + `sys.revision`).
    static func revisionFingerprint(of entry: ContentfulEntry) -> String {
        let document = entry.document
        var parts: [String] = []
        for resource in (document["items"]?.arrayValue ?? [document]) + (document["includes"]?["Entry"]?.arrayValue ?? [])
            + (document["includes"]?["Asset"]?.arrayValue ?? []) {
            let sys = resource["sys"]
            parts.append("\(sys?["type"]?.stringValue ?? "")/\(sys?["id"]?.stringValue ?? "")@\(sys?["revision"]?.numberValue?.text ?? "?")")
        }
        for error in document["errors"]?.arrayValue ?? [] {
            parts.append("missing/\(error["details"]?["id"]?.stringValue ?? "")")
        }
        return parts.sorted().joined(separator: ",")
    }

    /// The item's `sys.revision`, when it has one.
    static func itemRevision(of entry: ContentfulEntry) -> Int? {
        let document = entry.document
        let item = document["items"]?.arrayValue?.first ?? document
        return item["sys"]?["revision"]?.intValue
    }

    /// Every entry and asset id the document of `entry` contains (item and includes).
    static func referencedIds(of entry: ContentfulEntry) -> Set<String> {
        let document = entry.document
        var ids: Set<String> = [entry.id]
        for resource in (document["includes"]?["Entry"]?.arrayValue ?? []) + (document["includes"]?["Asset"]?.arrayValue ?? []) {
            if let id = resource["sys"]?["id"]?.stringValue { ids.insert(id) }
        }
        for error in document["errors"]?.arrayValue ?? [] {
            if let id = error["details"]?["id"]?.stringValue { ids.insert(id) }
        }
        return ids
    }
}
