import OptimizationJSON
import Foundation

/// A visitor's selected optimizations (the Experience API's `experiences`), prepared for
/// resolution: parsed once, with JSON text and a content key so an engine that has seen them
/// does not receive them again.
///
/// Each element is kept exactly as given (`{"experienceId", "variantIndex", "variants",
/// "sticky"?}`); malformed elements are passed through and simply never match.
public struct SelectedOptimizations: Sendable, Equatable {
    /// The selections in their original order.
    public let selections: [JSONValue]
    package let jsonText: String
    package let cacheKey: String
    package let handle = DocumentHandle.next()

    /// No selections: every entry resolves to its baseline.
    public static let empty = try! SelectedOptimizations([])

    /// The selections `[{experienceId, variantIndex, variants, sticky?}]` as given, in order.
    /// - Throws: `JSONError` when a value cannot be written as JSON (nesting beyond the limit).
    public init(_ selections: [JSONValue]) throws(JSONError) {
        self.selections = selections
        jsonText = try JSONValue.array(selections).jsonText()
        cacheKey = ContentKey.make(for: jsonText)
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
