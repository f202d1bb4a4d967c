import OrderedCollections
import OptimizationJSON
import OptimizationContent

/// Merge tags in rich text.
///
/// A merge tag is an `nt_mergetag` entry (`nt_name`, `nt_mergetag_id` — a profile path such as
/// `location.continent` or `traits_firstname` — and an optional `nt_fallback`) embedded in a
/// Rich Text field as an `embedded-entry-inline` node. ``references(in:field:)`` finds them;
/// ``OptimizationClient/mergeTagValues(in:profile:field:)`` renders them for a profile.
/// Pure values, `Sendable`; nothing here needs an engine.
public enum MergeTags {
    /// One merge tag found in a rich-text field.
    public struct Reference: Sendable, Equatable {
        /// The merge tag's `fields.nt_mergetag_id`, or its `sys.id` when that is missing.
        public var id: String
        /// The rich-text field it was found in.
        public var field: String
        /// The resolved `nt_mergetag` entry (links are resolved from a collection's includes).
        public var entry: JSONValue
    }

    /// What ``references(in:field:)`` found.
    public struct Scan: Sendable, Equatable {
        /// Every merge tag, in document order (fields in entry order), each id once (the first
        /// occurrence wins).
        public var references: [Reference]
        /// `sys.id`s of embedded inline entry links whose target is not in the document (their
        /// content type, hence whether they are merge tags, is unknown).
        public var unresolvedLinks: [String]
    }

    /// Why an entry's rich text cannot be scanned.
    public enum ScanError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The requested field does not exist on the entry.
        case fieldNotFound(entryId: String, field: String)
        /// The requested field is not a Rich Text document (`nodeType: "document"`).
        case notRichText(entryId: String, field: String)

        public var description: String {
            switch self {
            case .fieldNotFound(let entryId, let field): return "entry \"\(entryId)\" has no field \"\(field)\""
            case .notRichText(let entryId, let field): return "field \"\(field)\" of entry \"\(entryId)\" is not a rich-text document"
            }
        }
    }

    /// Why a document is not a profile.
    public enum ProfileError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The document is not a JSON object; the value names what it is (such as `an array` or
        /// `null`).
        case notAnObject(String)
        /// The document looks like an Experience API response (a `data` object and no top-level
        /// `id`) but has no `data.profile` object.
        case missingProfile

        public var description: String {
            switch self {
            case .notAnObject(let kind): return "expected a profile object or an Experience API response, found \(kind)"
            case .missingProfile: return "the Experience API response has no data.profile object"
            }
        }
    }

    /// Finds the merge tags embedded in `entry`'s rich-text fields: every `embedded-entry-inline`
    /// node whose target is an `nt_mergetag` entry, resolved inline or — for a Content Delivery
    /// API collection — through `items` + `includes.Entry`. Only the rich-text node tree is
    /// walked (iteratively; embedded entries are never entered), so cyclic graphs are safe.
    /// - Parameters:
    ///   - entry: the entry whose rich-text fields are scanned.
    ///   - field: scan only this field; nil scans every field holding a rich-text document.
    /// - Throws: ``ScanError`` when `field` is missing or not rich text.
    public static func references(in entry: ContentfulEntry, field: String? = nil) throws(ScanError) -> Scan {
        let fields = entry.baseline["fields"]?.objectValue ?? [:]
        var selected: [(String, JSONValue)] = []
        if let field {
            guard let value = fields[field] else { throw .fieldNotFound(entryId: entry.id, field: field) }
            guard isRichText(value) else { throw .notRichText(entryId: entry.id, field: field) }
            selected = [(field, value)]
        } else {
            selected = fields.filter { isRichText($0.value) }.map { ($0.key, $0.value) }
        }
        var scan = Scan(references: [], unresolvedLinks: [])
        var seen = Set<String>()
        var unresolved = Set<String>()
        for (name, document) in selected {
            var stack: [JSONValue] = [document]
            while let node = stack.popLast() {
                if node["nodeType"]?.stringValue == "embedded-entry-inline", let target = node["data"]?["target"] {
                    switch resolveTarget(target, in: entry) {
                    case .entry(let resolved):
                        if let reference = reference(for: resolved, field: name), seen.insert(reference.id).inserted {
                            scan.references.append(reference)
                        }
                    case .missingLink(let id):
                        if unresolved.insert(id).inserted { scan.unresolvedLinks.append(id) }
                    case .none:
                        break
                    }
                }
                if let children = node["content"]?.arrayValue {
                    stack.append(contentsOf: children.reversed())
                }
            }
        }
        return scan
    }

    /// The profile in `document`: the document itself (a bare Profile object), or `data.profile`
    /// of an Experience API response (`{"data": {"profile": …}, …}`).
    /// - Throws: ``ProfileError`` when `document` is not an object, or is an Experience API
    ///   response without a `data.profile` object.
    public static func profile(in document: JSONValue) throws(ProfileError) -> JSONValue {
        guard case .object = document else { throw .notAnObject(document.kindName) }
        if let data = document["data"], case .object = data, document["id"] == nil {
            guard let profile = data["profile"], case .object = profile else { throw .missingProfile }
            return profile
        }
        return document
    }

    // MARK: Internals

    private enum Target {
        case entry(JSONValue)
        case missingLink(String)
        case none
    }

    private static func isRichText(_ value: JSONValue) -> Bool {
        value["nodeType"]?.stringValue == "document"
    }

    private static func resolveTarget(_ target: JSONValue, in entry: ContentfulEntry) -> Target {
        if let id = LinkResolver.entryLinkID(target) {
            if let resolved = entry.entriesById[id] { return .entry(resolved) }
            return .missingLink(id)
        }
        return target["sys"]?["type"]?.stringValue == "Entry" ? .entry(target) : .none
    }

    private static func reference(for entry: JSONValue, field: String) -> Reference? {
        guard entry["sys"]?["contentType"]?["sys"]?["id"]?.stringValue == "nt_mergetag",
              let sysId = entry["sys"]?["id"]?.stringValue
        else { return nil }
        let id = entry["fields"]?["nt_mergetag_id"]?.stringValue ?? sysId
        return Reference(id: id, field: field, entry: entry)
    }
}

/// Rendered merge tags: each merge tag id mapped to its value, or nil when it has neither a
/// profile value nor a fallback (or is not a valid `nt_mergetag` entry).
public struct MergeTagValues: Sendable, Equatable {
    /// In document order.
    public var values: OrderedDictionary<String, String?>
    /// Embedded inline entry links whose target is not in the document (see
    /// ``MergeTags/Scan/unresolvedLinks``).
    public var unresolvedLinks: [String]

    /// The values as one JSON object (`null` for nil).
    public var jsonValue: JSONValue {
        .object(OrderedDictionary(uniqueKeysWithValues: values.map { ($0.key, $0.value.map(JSONValue.string) ?? .null) }))
    }
}
