import OptimizationJSON

/// Read access to a JSON document, the same for a parsed `JSONValue` tree and for a
/// `JSONTape` index, so that ``ContentfulEntry`` checks a document's shape and finds its
/// entries with one piece of code whichever form the document is in.
package protocol EntryDocumentReader {
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
    package func string(_ key: String, of node: Node) -> String? {
        member(key, of: node).flatMap(string(at:))
    }

    /// `sys.id` of the object at `node`.
    package func sysID(of node: Node) -> String? {
        member("sys", of: node).flatMap { string("id", of: $0) }
    }
}

/// A parsed document read through ``EntryDocumentReader``.
package struct JSONValueReader: EntryDocumentReader {
    package let root: JSONValue

    package func kindName(of node: JSONValue) -> String { node.kindName }
    package func isObject(_ node: JSONValue) -> Bool { node.objectValue != nil }
    package func member(_ key: String, of node: JSONValue) -> JSONValue? { node[key] }
    package func elements(of node: JSONValue) -> [JSONValue]? { node.arrayValue }
    package func element(_ index: Int, of node: JSONValue) -> JSONValue? { node[index] }
    package func string(at node: JSONValue) -> String? { node.stringValue }
}

extension JSONTape: EntryDocumentReader {
    package typealias Node = Int

    package var root: Int { Self.rootNode }

    package func kindName(of node: Int) -> String { kind(of: node).name }

    package func isObject(_ node: Int) -> Bool { kind(of: node) == .object }
}
