import Foundation
import OrderedCollections
import Synchronization

/// A Contentful entry prepared for resolution: either a single entry whose links are already
/// resolved (as contentful.js delivers it), or a raw Contentful Delivery API collection response
/// (`items` + `includes.Entry`, links unresolved) with one item chosen as the baseline.
///
/// Create it once per entry revision and reuse it: it carries its JSON text and a content key,
/// so an engine that has seen it resolves it again without re-serializing anything.
/// Immutable and `Sendable`; safe to share across threads and clients.
public final class ContentfulEntry: Sendable {
    /// The document as given: the entry itself, or the whole collection response.
    public let document: JSONValue
    /// The baseline entry object as it appears in the document (links unresolved for
    /// collections).
    public let baseline: JSONValue
    /// `sys.id` of the baseline.
    public let id: String
    /// Whether ``document`` is a CDA collection response.
    public let isCollection: Bool

    let jsonText: String
    let cacheKey: String
    let handle = DocumentHandle.next()
    /// One bit per runtime (its identifier modulo 64) that this entry was handed to: a runtime
    /// whose bit is clear skips the lookup that would certainly miss. Once every engine of a pool
    /// has the entry, resolving only READS this word, so threads sharing one entry never write
    /// to a common cache line (no ping-pong). A false "seen" (two runtimes on one bit, or an
    /// entry evicted from an engine's cache) only costs the engine's own miss answer.
    let knownRuntimes = Atomic<UInt64>(0)
    /// For collections: `sys.id` → entry, from `items` then `includes.Entry` (first wins).
    let entriesById: [String: JSONValue]
    private let rendered = Mutex<[EntryLocation: JSONValue]>([:])

    /// Parses `data` (UTF-8 JSON) as a single entry or a CDA collection response.
    /// - Parameter entryId: for collections, the `sys.id` of the item to use as the baseline;
    ///   nil means `items[0]`. Ignored for single entries unless it disagrees with `sys.id`.
    /// - Throws: ``ContentfulEntryError`` naming what is wrong and where.
    public convenience init(jsonData data: some Collection<UInt8>, entryId: String? = nil) throws(ContentfulEntryError) {
        let document: JSONValue
        do {
            document = try JSONValue(jsonData: data)
        } catch {
            throw .invalidJSON(error)
        }
        // The bytes were just validated as JSON (hence UTF-8): hand them to the engine as they
        // are, no re-serializing.
        try self.init(document: document, jsonText: Self.droppingByteOrderMark(String(decoding: data, as: UTF8.self)), entryId: entryId)
    }

    /// Parses JSON text (in place, without copying it); see ``init(jsonData:entryId:)``.
    public convenience init(jsonText text: String, entryId: String? = nil) throws(ContentfulEntryError) {
        let document: JSONValue
        do {
            document = try JSONValue(jsonText: text)
        } catch {
            throw .invalidJSON(error)
        }
        try self.init(document: document, jsonText: Self.droppingByteOrderMark(text), entryId: entryId)
    }

    private static func droppingByteOrderMark(_ text: String) -> String {
        text.utf8.first == 0xEF && text.utf8.starts(with: [0xEF, 0xBB, 0xBF]) ? String(text.unicodeScalars.dropFirst()) : text
    }

    /// Wraps an already-built value; see ``init(jsonData:entryId:)``.
    public convenience init(json: JSONValue, entryId: String? = nil) throws(ContentfulEntryError) {
        try self.init(document: json, jsonText: nil, entryId: entryId)
    }

    private init(document: JSONValue, jsonText: String?, entryId: String?) throws(ContentfulEntryError) {
        guard case .object = document else { throw .wrongShape("expected a JSON object (an entry or a collection response), found \(document.kindName)") }
        let baseline: JSONValue
        var index: [String: JSONValue] = [:]
        let isCollection = document["items"] != nil || document["sys"]?["type"]?.stringValue == "Array"
        if isCollection {
            guard let items = document["items"]?.arrayValue else {
                throw .wrongShape("a collection response needs an \"items\" array")
            }
            guard !items.isEmpty else { throw .emptyCollection }
            for case let item in items + (document["includes"]?["Entry"]?.arrayValue ?? []) {
                if let id = item["sys"]?["id"]?.stringValue, index[id] == nil { index[id] = item }
            }
            if let entryId {
                guard let item = items.first(where: { $0["sys"]?["id"]?.stringValue == entryId }) else {
                    throw .entryNotFound(entryId)
                }
                baseline = item
            } else {
                baseline = items[0]
            }
        } else {
            baseline = document
        }
        guard case .object = baseline else { throw .wrongShape("the baseline must be an entry object, found \(baseline.kindName)") }
        guard let sys = baseline["sys"], case .object = sys else { throw .wrongShape("the baseline entry has no \"sys\" object") }
        guard sys["type"]?.stringValue == "Entry" else { throw .wrongShape("the baseline's sys.type must be \"Entry\"") }
        guard let id = sys["id"]?.stringValue else { throw .wrongShape("the baseline entry has no string sys.id") }
        if !isCollection, let entryId, entryId != id { throw .entryNotFound(entryId) }
        var text = jsonText ?? ""
        if jsonText == nil {
            do {
                text = try document.jsonText()
            } catch {
                throw .invalidJSON(error)
            }
        }
        self.document = document
        self.baseline = baseline
        self.id = id
        self.isCollection = isCollection
        self.jsonText = text
        self.entriesById = index
        self.cacheKey = ContentKey.make(for: text, salt: isCollection ? id : "")
    }

    /// The entry to render at `location`, with entry links resolved from the includes for
    /// collection documents (cycle-safe), memoized. Nil when the location does not lead to an
    /// entry object in this document.
    func renderedEntry(at location: EntryLocation) -> JSONValue? {
        if let cached = rendered.withLock({ $0[location] }) { return cached }
        guard let raw = rawEntry(at: location) else { return nil }
        let value = isCollection ? LinkResolver(entriesById: entriesById).resolve(raw) : raw
        rendered.withLock { $0[location] = value }
        return value
    }

    /// The baseline as rendered (links resolved for collections): what every fallback returns.
    var renderedBaseline: JSONValue {
        renderedEntry(at: .baseline) ?? baseline
    }

    private func rawEntry(at location: EntryLocation) -> JSONValue? {
        guard case .variant(let experience, let variant) = location else { return baseline }
        guard let experienceEntry = dereference(baseline["fields"]?["nt_experiences"]?[experience]),
              let variantEntry = dereference(experienceEntry["fields"]?["nt_variants"]?[variant]),
              case .object = variantEntry
        else { return nil }
        return variantEntry
    }

    private func dereference(_ value: JSONValue?) -> JSONValue? {
        guard let value else { return nil }
        if isCollection, let id = LinkResolver.entryLinkID(value), let target = entriesById[id] { return target }
        return value
    }
}

/// Which entry of a document to render.
enum EntryLocation: Hashable, Sendable {
    case baseline
    /// `fields.nt_experiences[experience]` → `fields.nt_variants[variant]`.
    case variant(experience: Int, variant: Int)
}

/// Why a document cannot be used as a ``ContentfulEntry``.
public enum ContentfulEntryError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidJSON(JSONError)
    case wrongShape(String)
    case emptyCollection
    case entryNotFound(String)

    public var description: String {
        switch self {
        case .invalidJSON(let error): return error.description
        case .wrongShape(let detail): return "not a Contentful entry: \(detail)"
        case .emptyCollection: return "the collection response has no items"
        case .entryNotFound(let id): return "no item with sys.id \"\(id)\" in the document"
        }
    }
}

extension JSONValue {
    /// "an object", "an array", … for error messages.
    var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
