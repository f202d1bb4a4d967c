import ArgumentParser
import Foundation

/// A failure an executable of this package reports as `error: <message>` on stderr before it
/// exits with `exitCode` (a sysexits code).
protocol ReportedFailure: Error {
    /// What went wrong, in words (no visitor data, no secrets).
    var message: String { get }
    /// The process's exit status.
    var exitCode: Int32 { get }
}

extension ParsableCommand {
    /// Parses the arguments and runs the command; never returns. A ``ReportedFailure`` exits with
    /// its code, `--help` and `--version` print and exit 0, and any other failure (bad arguments
    /// included) is printed as `error: …` on stderr and exits 64 (usage) or the parser's code.
    static func runReportingFailures() -> Never {
        do {
            var command = try parseAsRoot()
            try command.run()
            Foundation.exit(0)
        } catch let failure as any ReportedFailure {
            FileHandle.standardError.write(Data("error: \(failure.message)\n".utf8))
            Foundation.exit(failure.exitCode)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            var message = fullMessage(for: error)
            if message.hasPrefix("Error: ") { message = String(message.dropFirst("Error: ".count)) }
            if message.hasPrefix("error: ") { message = String(message.dropFirst("error: ".count)) }
            FileHandle.standardError.write(Data("error: \(message.hasSuffix("\n") ? String(message.dropLast()) : message)\n".utf8))
            Foundation.exit(code.rawValue == 1 ? 64 : code.rawValue)
        }
    }
}
