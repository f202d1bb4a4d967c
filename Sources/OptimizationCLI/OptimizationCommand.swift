import ArgumentParser
import Foundation

/// The `optimization` executable. Parses arguments and calls the library; no optimization logic
/// lives here.
@main
struct OptimizationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "optimization",
        abstract: "Resolve Contentful entries to their baseline or variant and render merge tags.",
        subcommands: [ResolveCommand.self, MergeTagsCommand.self]
    )

    /// Runs the command, printing every failure as `error: …` on stderr with a sysexits code:
    /// 64 usage, 65 bad data, 66 missing input, 70 internal failure.
    static func main() {
        runReportingFailures()
    }
}

/// A failure the CLI reports as `error: <message>` with `exitCode`.
struct CLIFailure: ReportedFailure {
    var message: String
    var exitCode: Int32

    static func usage(_ message: String) -> CLIFailure { CLIFailure(message: message, exitCode: 64) }
    static func data(_ message: String) -> CLIFailure { CLIFailure(message: message, exitCode: 65) }
    static func noInput(_ message: String) -> CLIFailure { CLIFailure(message: message, exitCode: 66) }
    static func software(_ message: String) -> CLIFailure { CLIFailure(message: message, exitCode: 70) }
}
