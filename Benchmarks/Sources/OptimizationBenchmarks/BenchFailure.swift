import Foundation

/// A benchmark that could not measure what it should (a wrong answer, a step that failed):
/// `optimization-bench` prints `error: <message>` and exits with 70.
struct BenchFailure: ReportedFailure, CustomStringConvertible {
    let message: String
    var exitCode: Int32 { 70 }

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}

/// `--check-allocations`: operations that allocated more than their ceiling. `optimization-bench`
/// prints `error: …` naming each and exits with 1.
struct AllocationCeilingsExceeded: ReportedFailure, CustomStringConvertible {
    let failures: [String]
    var exitCode: Int32 { 1 }
    var message: String { "allocations above their ceiling: " + failures.joined(separator: "; ") }
    var description: String { message }
}
