/// Why JSON text could not be read or written.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of problem.
    public enum Reason: Sendable, Equatable {
        /// The text breaks JSON syntax; `expected` says what the parser wanted.
        case syntax(expected: String)
        /// Arrays/objects nested deeper than the limit.
        case tooDeep(limit: Int)
        /// A string is not valid UTF-8.
        case invalidUTF8
        /// Nothing but whitespace.
        case empty
    }

    /// The kind of problem.
    public var reason: Reason
    /// The 0-based byte offset of the problem in the text (0 when writing).
    public var offset: Int
    /// The 1-based line of the problem (0 when writing).
    public var line: Int
    /// The 1-based column of the problem, in bytes from the start of its line (0 when writing).
    public var column: Int

    /// An error at a place in the text (`offset` 0-based; `line` and `column` 1-based, 0 when
    /// writing).
    public init(reason: Reason, offset: Int, line: Int, column: Int) {
        self.reason = reason
        self.offset = offset
        self.line = line
        self.column = column
    }

    public var description: String {
        let place = line > 0 ? "line \(line), column \(column)" : "byte \(offset)"
        switch reason {
        case .syntax(let expected): return "invalid JSON at \(place): expected \(expected)"
        case .tooDeep(let limit): return "JSON nested deeper than \(limit) levels at \(place)"
        case .invalidUTF8: return "invalid UTF-8 in a JSON string at \(place)"
        case .empty: return "empty input: expected a JSON value"
        }
    }
}
