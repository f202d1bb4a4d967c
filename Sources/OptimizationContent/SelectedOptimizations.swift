import OptimizationJSON
import Foundation
import Synchronization

/// A visitor's selected optimizations (the Experience API's `experiences`), prepared for
/// resolution: parsed once, with JSON text and a content key so an engine that has seen them
/// does not receive them again.
///
/// Each element is kept exactly as given (`{"experienceId", "variantIndex", "variants",
/// "sticky"?}`); malformed elements are passed through and simply never match.
///
/// Selections opened from a sealed visitor state keep the text that was sealed and build
/// ``selections`` from it on first access (resolving builds only the element it returns). The
/// content key is computed when an engine first needs it, not when the selections are made.
public struct SelectedOptimizations: Sendable, Equatable {
    /// The selections in their original order (built from the text on first access when these
    /// selections were opened from a sealed visitor state).
    public var selections: [JSONValue] { storage.selections(of: jsonText) }
    package let jsonText: String
    /// The content key under which engines keep these selections (``ContentKey``): computed on
    /// first use (a hand-over to an engine, or a memo lookup by content), not when created.
    package var cacheKey: String { storage.cacheKey(for: jsonText) }
    package let handle = DocumentHandle.next()
    private let storage: Storage

    /// No selections: every entry resolves to its baseline.
    public static let empty = try! SelectedOptimizations([])

    /// The selections `[{experienceId, variantIndex, variants, sticky?}]` as given, in order.
    /// - Throws: `JSONError` when a value cannot be written as JSON (nesting beyond the limit).
    public init(_ selections: [JSONValue]) throws(JSONError) {
        jsonText = try JSONValue.array(selections).jsonText()
        storage = Storage(built: selections)
    }

    /// The array at `node` of a scanned document, keeping its text as written instead of
    /// writing the values again: for text this library wrote itself with ``init(_:)`` (the
    /// `"s"` member of a verified visitor state), which is exactly what ``init(_:)`` would write
    /// for the values it holds. The tape has validated the text (so it parses as the values it
    /// holds; a tape scanned with at most the default maximum depth holds nothing nested more
    /// deeply than the writer allows); nil when `node` is not an array (a verified value of
    /// another shape).
    ///
    /// Text of another writer (whitespace, other escapes) is kept as it is: ``selections`` are
    /// the same values, but `==` (which compares text) sees it as different.
    package init?(writtenArrayAt node: Int, of tape: JSONTape) {
        guard tape.kind(of: node) == .array else { return nil }
        jsonText = tape.text(of: node)
        storage = Storage(built: nil)
    }

    /// Reads either an Experience API response envelope (`data.experiences`) or a bare JSON
    /// array of selections.
    /// - Throws: ``SelectedOptimizationsError``.
    public init(jsonData data: some Collection<UInt8>) throws(SelectedOptimizationsError) {
        let value: JSONValue
        do {
            value = try JSONValue(jsonData: data)
        } catch {
            throw .invalidJSON(error)
        }
        try self.init(json: value)
    }

    /// See ``init(jsonData:)``.
    public init(json value: JSONValue) throws(SelectedOptimizationsError) {
        let array: [JSONValue]
        if let elements = value.arrayValue {
            array = elements
        } else if let experiences = value["data"]?["experiences"]?.arrayValue {
            array = experiences
        } else {
            throw .wrongShape(
                "expected an Experience API response ({\"data\":{\"experiences\":[…]}}) or a JSON array of selections, found \(value.kindName)\(value.objectValue.map { " with keys \(Array($0.keys.prefix(5)))" } ?? "")")
        }
        do {
            try self.init(array)
        } catch {
            throw .invalidJSON(error)
        }
    }

    public static func == (lhs: SelectedOptimizations, rhs: SelectedOptimizations) -> Bool {
        lhs.jsonText == rhs.jsonText
    }

    /// The selection at `index`, or nil when out of range. Selections kept as text build only
    /// this element (once).
    package func selection(at index: Int) -> JSONValue? {
        storage.selection(at: index, in: jsonText)
    }

    /// The built selections and content key, shared by copies: made on demand for selections
    /// kept as text.
    private final class Storage: Sendable {
        /// The selections given to ``SelectedOptimizations/init(_:)``; nil when kept as text.
        private let built: [JSONValue]?
        private let state = Mutex(State())

        private struct State {
            var cacheKey: String?
            /// All selections, parsed from the text (only when kept as text).
            var parsed: [JSONValue]?
            /// The text's elements (a tape recording the array and its elements only), and the
            /// ones already built by position, for ``selection(at:in:)`` before ``parsed``.
            var elements: JSONTape?
            var builtElements: [Int: JSONValue] = [:]
        }

        init(built: [JSONValue]?) {
            self.built = built
        }

        func selections(of text: String) -> [JSONValue] {
            if let built { return built }
            return state.withLock { state in
                if let parsed = state.parsed { return parsed }
                let parsed: [JSONValue]
                if let elements = (try? JSONValue(jsonText: text))?.arrayValue {
                    parsed = elements
                } else {
                    // Unreachable: the text was validated as an array when these selections were made.
                    assertionFailure("selections kept as text did not parse as an array")
                    parsed = []
                }
                state.parsed = parsed
                state.elements = nil
                state.builtElements = [:]
                return parsed
            }
        }

        func selection(at index: Int, in text: String) -> JSONValue? {
            if let built { return built.indices.contains(index) ? built[index] : nil }
            return state.withLock { state -> JSONValue? in
                if let parsed = state.parsed { return parsed.indices.contains(index) ? parsed[index] : nil }
                if let element = state.builtElements[index] { return element }
                if state.elements == nil { state.elements = JSONTape.scan(text, recordedDepth: 1) }
                guard let tape = state.elements else {
                    // Unreachable: the text was validated when these selections were made.
                    assertionFailure("selections kept as text did not scan")
                    return nil
                }
                guard let node = tape.element(index, of: JSONTape.rootNode) else { return nil }
                let element = tape.value(of: node)
                state.builtElements[index] = element
                return element
            }
        }

        func cacheKey(for text: String) -> String {
            state.withLock { state in
                if let key = state.cacheKey { return key }
                let key = ContentKey.make(for: text)
                state.cacheKey = key
                return key
            }
        }
    }
}

/// Why a document cannot be used as ``SelectedOptimizations``.
public enum SelectedOptimizationsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not JSON (or is nested too deeply); the error says where.
    case invalidJSON(JSONError)
    /// The JSON is neither an array of selections nor an Experience API response envelope.
    case wrongShape(String)

    public var description: String {
        switch self {
        case .invalidJSON(let error): return error.description
        case .wrongShape(let detail): return "not selected optimizations: \(detail)"
        }
    }
}
