import OptimizationJSON
import Foundation
import OrderedCollections
import Synchronization

/// A Contentful entry prepared for resolution: either a single entry whose links are already
/// resolved (as contentful.js delivers it), or a raw Contentful Delivery API collection response
/// (`items` + `includes.Entry`, links unresolved) with one item chosen as the baseline.
///
/// Create it once per entry revision and reuse it: it carries its JSON text and a content key,
/// so an engine that has seen it resolves it again without re-serializing anything.
///
/// Parsing from text validates the whole document and checks its shape, but builds no
/// `JSONValue` tree: it indexes the text (`JSONTape`). ``document`` and ``baseline`` are
/// built on first access (then kept); resolving a single entry builds only the variant it
/// returns.
/// Immutable and `Sendable`; safe to share across threads and clients.
public final class ContentfulEntry: Sendable {
    /// The document as given: the entry itself, or the whole collection response. Built from
    /// the text on first access when the entry was parsed.
    public var document: JSONValue { tree.document }
    /// The baseline entry object as it appears in the document (links unresolved for
    /// collections).
    public var baseline: JSONValue { tree.baseline }
    /// `sys.id` of the baseline.
    public let id: String
    /// Whether ``document`` is a CDA collection response.
    public let isCollection: Bool

    package let jsonText: String
    /// The content key under which engines keep this entry's prepared form (``ContentKey``):
    /// computed on the first hand-over to an engine, not when parsing.
    package var cacheKey: String {
        contentKey.withLock { key in
            if let key { return key }
            let made = ContentKey.make(for: jsonText, salt: isCollection ? id : "")
            key = made
            return made
        }
    }
    package let handle = DocumentHandle.next()
    /// One bit per runtime (its identifier modulo 64) that this entry was handed to: a runtime
    /// whose bit is clear skips the lookup that would certainly miss. Once every engine of a pool
    /// has the entry, resolving only READS this word, so threads sharing one entry never write
    /// to a common cache line (no ping-pong). A false "seen" (two runtimes on one bit, or an
    /// entry evicted from an engine's cache) only costs the engine's own miss answer.
    package let knownRuntimes = Atomic<UInt64>(0)
    /// For collections: `sys.id` → entry, from `items` then `includes.Entry` (first wins).
    package var entriesById: [String: JSONValue] { tree.entriesById }

    /// The index of a parsed single entry, for building only the variants it resolves to; nil
    /// when the entry was built from a value, or is a collection (whose links need the tree).
    private let tape: JSONTape?
    /// The position of the baseline in `items` (collections).
    private let baselineItem: Int
    private let builtTree: Mutex<Tree?>
    private let rendered = Mutex<[EntryLocation: JSONValue]>([:])
    private let contentKey = Mutex<String?>(nil)

    /// The document as values, with the baseline and the collection's entries by id.
    private struct Tree: Sendable {
        var document: JSONValue
        var baseline: JSONValue
        var entriesById: [String: JSONValue]
    }

    /// Parses `data` (UTF-8 JSON) as a single entry or a CDA collection response.
    /// - Parameters:
    ///   - data: the document's bytes, UTF-8.
    ///   - entryId: for collections, the `sys.id` of the item to use as the baseline;
    ///     nil means `items[0]`. Ignored for single entries unless it disagrees with `sys.id`.
    /// - Throws: ``ContentfulEntryError`` naming what is wrong and where.
    public convenience init(jsonData data: some Collection<UInt8>, entryId: String? = nil) throws(ContentfulEntryError) {
        // A JSON document is valid UTF-8 throughout, and then decoding it changes no byte. Bytes
        // that are not are reported by the parser as given, never read as a repaired copy.
        let isUTF8 = data.withContiguousStorageIfAvailable(UTF8Validation.isValid) ?? Array(data).withUnsafeBufferPointer(UTF8Validation.isValid)
        if !isUTF8 {
            do {
                _ = try JSONValue(jsonData: data)
            } catch {
                throw .invalidJSON(error)
            }
        }
        try self.init(jsonText: String(decoding: data, as: UTF8.self), entryId: entryId)
    }

    /// Parses JSON text (in place, without copying it); see ``init(jsonData:entryId:)``.
    public convenience init(jsonText text: String, entryId: String? = nil) throws(ContentfulEntryError) {
        let text = Self.droppingByteOrderMark(text)
        guard let tape = JSONTape.scan(text) else {
            // Not JSON: the parser names the problem. (Were it to accept what the scan refused,
            // its tree is used instead.)
            let document: JSONValue
            do {
                document = try JSONValue(jsonText: text)
            } catch {
                throw .invalidJSON(error)
            }
            try self.init(document: document, jsonText: text, entryId: entryId)
            return
        }
        let shape = try Self.shape(of: tape, entryId: entryId)
        self.init(id: shape.id, isCollection: shape.isCollection, baselineItem: shape.baselineItem, jsonText: tape.text,
                  tape: shape.isCollection ? nil : tape, tree: nil)
    }

    private static func droppingByteOrderMark(_ text: String) -> String {
        text.utf8.first == 0xEF && text.utf8.starts(with: [0xEF, 0xBB, 0xBF]) ? String(text.unicodeScalars.dropFirst()) : text
    }

    /// Wraps an already-built value; see ``init(jsonData:entryId:)``.
    public convenience init(json: JSONValue, entryId: String? = nil) throws(ContentfulEntryError) {
        try self.init(document: json, jsonText: nil, entryId: entryId)
    }

    private convenience init(document: JSONValue, jsonText: String?, entryId: String?) throws(ContentfulEntryError) {
        let shape = try Self.shape(of: JSONValueReader(root: document), entryId: entryId)
        var text = jsonText ?? ""
        if jsonText == nil {
            do {
                text = try document.jsonText()
            } catch {
                throw .invalidJSON(error)
            }
        }
        let tree = Tree(document: document, baseline: shape.baseline, entriesById: Self.entriesById(in: document, isCollection: shape.isCollection))
        self.init(id: shape.id, isCollection: shape.isCollection, baselineItem: shape.baselineItem, jsonText: text, tape: nil, tree: tree)
    }

    private init(id: String, isCollection: Bool, baselineItem: Int, jsonText: String, tape: JSONTape?, tree: Tree?) {
        self.id = id
        self.isCollection = isCollection
        self.baselineItem = baselineItem
        self.jsonText = jsonText
        self.tape = tape
        self.builtTree = Mutex(tree)
    }

    /// Where the baseline is and what it is called, or why the document is not an entry.
    private struct Shape<Node> {
        var baseline: Node
        var baselineItem: Int
        var id: String
        var isCollection: Bool
    }

    private static func shape<Reader: EntryDocumentReader>(
        of reader: Reader, entryId: String?
    ) throws(ContentfulEntryError) -> Shape<Reader.Node> {
        let document = reader.root
        guard reader.isObject(document) else {
            throw .wrongShape("expected a JSON object (an entry or a collection response), found \(reader.kindName(of: document))")
        }
        let baseline: Reader.Node
        var baselineItem = 0
        let isCollection = reader.member("items", of: document) != nil
            || reader.member("sys", of: document).flatMap { reader.string("type", of: $0) } == "Array"
        if isCollection {
            guard let items = reader.member("items", of: document).flatMap(reader.elements(of:)) else {
                throw .wrongShape("a collection response needs an \"items\" array")
            }
            guard !items.isEmpty else { throw .emptyCollection }
            if let entryId {
                guard let position = items.firstIndex(where: { reader.sysID(of: $0) == entryId }) else {
                    throw .entryNotFound(entryId)
                }
                baselineItem = position
            }
            baseline = items[baselineItem]
        } else {
            baseline = document
        }
        guard reader.isObject(baseline) else { throw .wrongShape("the baseline must be an entry object, found \(reader.kindName(of: baseline))") }
        guard let sys = reader.member("sys", of: baseline), reader.isObject(sys) else {
            throw .wrongShape("the baseline entry has no \"sys\" object")
        }
        guard reader.string("type", of: sys) == "Entry" else { throw .wrongShape("the baseline's sys.type must be \"Entry\"") }
        guard let id = reader.string("id", of: sys) else { throw .wrongShape("the baseline entry has no string sys.id") }
        if !isCollection, let entryId, entryId != id { throw .entryNotFound(entryId) }
        return Shape(baseline: baseline, baselineItem: baselineItem, id: id, isCollection: isCollection)
    }

    /// For collections: `sys.id` → entry, from `items` then `includes.Entry` (first wins).
    private static func entriesById(in document: JSONValue, isCollection: Bool) -> [String: JSONValue] {
        guard isCollection else { return [:] }
        var index: [String: JSONValue] = [:]
        for item in (document["items"]?.arrayValue ?? []) + (document["includes"]?["Entry"]?.arrayValue ?? []) {
            if let id = item["sys"]?["id"]?.stringValue, index[id] == nil { index[id] = item }
        }
        return index
    }

    /// The tree, built from the text on first use.
    private var tree: Tree {
        builtTree.withLock { built in
            if let built { return built }
            let document: JSONValue
            do {
                document = try JSONValue(jsonText: jsonText)
            } catch {
                // Unreachable: the text was validated when the entry was made.
                assertionFailure("a validated entry did not parse: \(error)")
                document = .null
            }
            let baseline = isCollection ? document["items"]?[baselineItem] ?? .null : document
            let tree = Tree(document: document, baseline: baseline, entriesById: Self.entriesById(in: document, isCollection: isCollection))
            built = tree
            return tree
        }
    }

    /// The entry to render at `location`, with entry links resolved from the includes for
    /// collection documents (cycle-safe), memoized. Nil when the location does not lead to an
    /// entry object in this document.
    package func renderedEntry(at location: EntryLocation) -> JSONValue? {
        if let cached = rendered.withLock({ $0[location] }) { return cached }
        guard let raw = rawEntry(at: location) else { return nil }
        let value = isCollection ? LinkResolver(entriesById: entriesById).resolve(raw) : raw
        rendered.withLock { $0[location] = value }
        return value
    }

    /// The baseline as rendered (links resolved for collections): what every fallback returns.
    package var renderedBaseline: JSONValue {
        renderedEntry(at: .baseline) ?? baseline
    }

    private func rawEntry(at location: EntryLocation) -> JSONValue? {
        guard case .variant(let experience, let variant) = location else { return baseline }
        if let tape {
            // A single entry's variants are inline: build only the one asked for.
            return Self.variant(experience, variant, of: tape.root, in: tape, dereference: { $0 }).map(tape.value(of:))
        }
        let tree = tree
        return Self.variant(experience, variant, of: tree.baseline, in: JSONValueReader(root: tree.document)) { value in
            if isCollection, let id = LinkResolver.entryLinkID(value), let target = tree.entriesById[id] { return target }
            return value
        }
    }

    /// `fields.nt_experiences[experience]` → `fields.nt_variants[variant]` of `baseline`, each
    /// step through `dereference` (links to included entries); nil unless it is an object.
    private static func variant<Reader: EntryDocumentReader>(
        _ experience: Int, _ variant: Int, of baseline: Reader.Node, in reader: Reader, dereference: (Reader.Node) -> Reader.Node
    ) -> Reader.Node? {
        func step(_ node: Reader.Node, _ list: String, _ position: Int) -> Reader.Node? {
            reader.member("fields", of: node).flatMap { reader.member(list, of: $0) }.flatMap { reader.element(position, of: $0) }
                .map(dereference)
        }
        guard let experienceEntry = step(baseline, "nt_experiences", experience),
              let variantEntry = step(experienceEntry, "nt_variants", variant),
              reader.isObject(variantEntry)
        else { return nil }
        return variantEntry
    }
}

/// Which entry of a document to render.
package enum EntryLocation: Hashable, Sendable {
    case baseline
    /// `fields.nt_experiences[experience]` → `fields.nt_variants[variant]`.
    case variant(experience: Int, variant: Int)
}

/// Why a document cannot be used as a ``ContentfulEntry``.
public enum ContentfulEntryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not JSON (or is nested too deeply); the error says where.
    case invalidJSON(JSONError)
    /// The JSON is not an entry or a collection response; the text names what is missing.
    case wrongShape(String)
    /// A collection response with no items.
    case emptyCollection
    /// No item of the collection has the requested `sys.id` (the id).
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
