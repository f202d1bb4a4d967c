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
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let failure as CLIFailure {
            FileHandle.standardError.write(Data("error: \(failure.message)\n".utf8))
            Foundation.exit(failure.exitCode)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // --help and --version end up here.
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            var message = fullMessage(for: error)
            if message.hasPrefix("Error: ") { message = "error: " + message.dropFirst("Error: ".count) }
            if !message.hasPrefix("error: ") { message = "error: " + message }
            FileHandle.standardError.write(Data((message.hasSuffix("\n") ? message : message + "\n").utf8))
            Foundation.exit(code.rawValue == 1 ? 64 : code.rawValue)
        }
    }
}

/// A failure the CLI reports as `error: <message>` with `exitCode`.
struct CLIFailure: Error {
    var message: String
    var exitCode: Int32

    static func usage(_ message: String) -> CLIFailure { CLIFailure(message: message, exitCode: 64) }
    static func data(_ message: String) -> CLIFailure { CLIFailure(message: message, exitCode: 65) }
    static func noInput(_ message: String) -> CLIFailure { CLIFailure(message: message, exitCode: 66) }
    static func software(_ message: String) -> CLIFailure { CLIFailure(message: message, exitCode: 70) }
}
