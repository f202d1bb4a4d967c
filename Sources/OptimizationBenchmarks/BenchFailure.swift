import CommandLineReporting
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
