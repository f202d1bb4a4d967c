/// Read access to a JSON document, the same for a parsed ``JSONValue`` tree and for a
/// ``JSONTape`` index, so that ``ContentfulEntry`` checks a document's shape and finds its
/// entries with one piece of code whichever form the document is in.
protocol EntryDocumentReader {
    associatedtype Node
    var root: Node { get }
    func kindName(of node: Node) -> String
    func isObject(_ node: Node) -> Bool
    /// The member `key` of an object (the last value of a repeated key); nil for other kinds.
    func member(_ key: String, of node: Node) -> Node?
    /// The elements of an array; nil for other kinds.
    func elements(of node: Node) -> [Node]?
    func element(_ index: Int, of node: Node) -> Node?
    func string(at node: Node) -> String?
}

extension EntryDocumentReader {
    /// The string at `key` of the object at `node`, if there is one.
    func string(_ key: String, of node: Node) -> String? {
        member(key, of: node).flatMap(string(at:))
    }

    /// `sys.id` of the object at `node`.
    func sysID(of node: Node) -> String? {
        member("sys", of: node).flatMap { string("id", of: $0) }
    }
}

/// A parsed document read through ``EntryDocumentReader``.
struct JSONValueReader: EntryDocumentReader {
    let root: JSONValue

    func kindName(of node: JSONValue) -> String { node.kindName }
    func isObject(_ node: JSONValue) -> Bool { node.objectValue != nil }
    func member(_ key: String, of node: JSONValue) -> JSONValue? { node[key] }
    func elements(of node: JSONValue) -> [JSONValue]? { node.arrayValue }
    func element(_ index: Int, of node: JSONValue) -> JSONValue? { node[index] }
    func string(at node: JSONValue) -> String? { node.stringValue }
}

extension JSONTape: EntryDocumentReader {
    typealias Node = Int

    var root: Int { Self.rootNode }

    func kindName(of node: Int) -> String { kind(of: node).name }

    func isObject(_ node: Int) -> Bool { kind(of: node) == .object }
}
