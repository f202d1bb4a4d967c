import OptimizationJSON
import OptimizationVocabulary

/// A JSON value the bridge answered with, read in place: the answer's text is indexed once
/// (`JSONTape`) and a caller builds a `JSONValue` only for the parts it needs, or hands a part
/// on as text without parsing and serializing it again (the service passes an event call's
/// Insights items to its delivery queue this way).
///
/// Immutable and `Sendable`; every accessor is O(size of the part it reads).
package struct BridgeDocument: LazyJSONValue {
    let tape: JSONTape
    let node: Int

    /// The whole of `text`; nil when it is not a JSON document.
    package init?(jsonText text: String) {
        guard let tape = JSONTape.scan(text) else { return nil }
        self.init(tape: tape, node: JSONTape.rootNode)
    }

    init(tape: JSONTape, node: Int) {
        self.tape = tape
        self.node = node
    }

    /// The member `key` of an object (the last of a repeated key); nil for other kinds.
    package subscript(key: String) -> BridgeDocument? {
        tape.member(key, of: node).map { BridgeDocument(tape: tape, node: $0) }
    }

    /// The element at `index` of an array; nil for other kinds or out of range.
    package subscript(index: Int) -> BridgeDocument? {
        tape.element(index, of: node).map { BridgeDocument(tape: tape, node: $0) }
    }

    /// The elements of an array, in order; nil for other kinds.
    package var elements: [BridgeDocument]? {
        tape.elements(of: node)?.map { BridgeDocument(tape: tape, node: $0) }
    }

    /// What kind of value this is.
    package var kind: JSONKind { tape.kind(of: node) }

    /// A boolean's value; nil for other kinds.
    package var boolValue: Bool? { tape.bool(at: node) }

    /// A string's text; nil for other kinds.
    package var stringValue: String? { tape.string(at: node) }

    /// The value as a tree.
    package var value: JSONValue { tape.value(of: node) }

    /// The value's exact JSON text.
    package var jsonText: String { tape.text(of: node) }
}
