import ArgumentParser
import Foundation

/// Where `personalized-pages` takes one secret from (a visitor-state key, an OFREP credential,
/// the webhook signing secret, the PostgreSQL URL's password, the CDA token): the environment or
/// a `--…-file` option, never, ideally, an argument, since every local user reads the
/// arguments of every process in `/proc/<pid>/cmdline`.
///
/// **Contract.** ``resolve(arguments:file:environment:)`` takes, in this order: the values given
/// as arguments (accepted for local development, with a ``Resolved/warning`` the command prints
/// on stderr at start-up); else the file's; else the environment variable's; else none. Giving
/// both the argument and the file is an error. A file holding one secret is taken whole, less one
/// trailing newline (`\n` or `\r\n`); a file holding a list (``isList``) has one value per line
/// (commas also separate, as in the environment variable), each trimmed of spaces, empty ones
/// dropped. An unreadable file, a file that is not UTF-8, or one holding no value is a
/// `ValidationError` naming the option and the path, never the content.
struct SecretSource: Sendable {
    /// What a resolution found.
    struct Resolved: Equatable, Sendable {
        /// The secret's values (one for a single secret; none when not configured).
        var values: [String]
        /// Set when the secret was given as an argument: the warning to print on stderr.
        var warning: String?
    }

    /// The option that takes the secret as an argument, e.g. `--visitor-state-key`; nil when
    /// there is none (only the file and the environment).
    let flag: String?
    /// The option naming a file that holds it, e.g. `--visitor-state-key-file`.
    let fileFlag: String
    /// The environment variable holding it (comma-separated for a list).
    let environmentVariable: String
    /// True: several values (repeatable option; one per line in the file; comma-separated in the
    /// environment). False: one value.
    let isList: Bool

    /// The secret's values and, when given as arguments, the warning (see the type's contract).
    /// - Parameters:
    ///   - arguments: the values given with ``flag`` (empty: none).
    ///   - file: the path given with ``fileFlag`` (nil: none).
    ///   - environment: the process environment.
    /// - Throws: `ValidationError` when both ``flag`` and ``fileFlag`` are given, or the file
    ///   cannot be read or holds no value.
    func resolve(arguments: [String], file: String?, environment: [String: String]) throws -> Resolved {
        if let flag, !arguments.isEmpty {
            guard file == nil else { throw ValidationError("give either \(flag) or \(fileFlag), not both") }
            return Resolved(values: arguments, warning: Self.warning(flag: flag, fileFlag: fileFlag, environmentVariable: environmentVariable))
        }
        if let file {
            let values = split(try Self.read(file, option: fileFlag))
            guard !values.isEmpty else { throw ValidationError("\(fileFlag): \(file) holds no value") }
            return Resolved(values: values)
        }
        return Resolved(values: split(environment[environmentVariable] ?? ""))
    }

    /// The warning for a secret given as an argument.
    static func warning(flag: String, fileFlag: String, environmentVariable: String) -> String {
        "warning: \(flag) was given as an argument, which every local user can read (/proc/<pid>/cmdline, ps); "
            + "set \(environmentVariable) or use \(fileFlag) instead (accepted for local development only)"
    }

    /// One value: the whole text (`text` is already one secret); a list: lines and commas.
    private func split(_ text: String) -> [String] {
        guard isList else { return text.isEmpty ? [] : [text] }
        return text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "," })
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The file's text, less one trailing newline.
    /// - Throws: `ValidationError` naming `option` and `path` (never the content).
    static func read(_ path: String, option: String) throws -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ValidationError("\(option): cannot read \(path)")
        }
        guard var text = String(data: data, encoding: .utf8) else { throw ValidationError("\(option): \(path) is not UTF-8 text") }
        if text.hasSuffix("\r\n") {
            text.removeLast()  // "\r\n" is one Character
        } else if text.hasSuffix("\n") {
            text.removeLast()
        }
        return text
    }
}
