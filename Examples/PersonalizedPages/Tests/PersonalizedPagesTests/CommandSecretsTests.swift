import ArgumentParser
import Foundation
import OptimizationTesting
@testable import personalized_pages
import Testing

/// `personalized-pages` takes every secret from the environment or a `--…-file` option; one
/// given as an argument (readable by every local user in `/proc/<pid>/cmdline`) is accepted with
/// a warning printed on stderr at start-up (issue 46, F10).
@Suite(.hangBound) struct CommandSecretsTests {
    /// A file in a fresh temporary folder holding `text`; the folder is removed after `body`.
    func withFiles<T>(_ texts: [String: String], _ body: ([String: String]) throws -> T) throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var paths: [String: String] = [:]
        for (name, text) in texts {
            let file = folder.appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            paths[name] = file.path
        }
        return try body(paths)
    }

    static let webhookSecret = String(repeating: "w", count: 64)
    static let key = TestVisitorState.key
    static let otherKey = "b3RoZXIta2V5LW9mLXBlcnNvbmFsaXplZC1wYWdlcy0xMg=="

    @Test func secretsFromFilesAreTrimmedOfATrailingNewlineAndWarnNothing() throws {
        try withFiles([
            "keys": "\(Self.key)\n\(Self.otherKey)\n", "tokens": "token-one\r\ntoken-two\n", "api-keys": "key-one",
            "webhook": "\(Self.webhookSecret)\n", "postgres": "postgres://app:s3cret@db/pages\n", "cda": "cda-token\r\n",
        ]) { paths in
            let command = try PersonalizedPagesCommand.parse([
                "--visitor-state-key-file", paths["keys"]!, "--ofrep-token-file", paths["tokens"]!,
                "--ofrep-api-key-file", paths["api-keys"]!, "--contentful-webhook-secret-file", paths["webhook"]!,
                "--postgres-file", paths["postgres"]!, "--contentful-access-token-file", paths["cda"]!,
            ])
            let secrets = try command.secrets(environment: [:])
            #expect(secrets.visitorStateKeys == [Self.key, Self.otherKey])
            #expect(secrets.ofrepTokens == ["token-one", "token-two"] && secrets.ofrepAPIKeys == ["key-one"])
            #expect(secrets.webhookSecret == Self.webhookSecret)
            #expect(secrets.postgresURL == "postgres://app:s3cret@db/pages")
            #expect(secrets.contentfulAccessToken == "cda-token")
            #expect(secrets.warnings.isEmpty)
        }
    }

    @Test func secretsFromTheEnvironmentWarnNothing() throws {
        let command = try PersonalizedPagesCommand.parse([])
        let secrets = try command.secrets(environment: [
            "PP_VISITOR_STATE_KEYS": "\(Self.key), \(Self.otherKey)", "PP_OFREP_TOKENS": "token-one",
            "PP_OFREP_API_KEYS": "key-one,key-two", "CONTENTFUL_WEBHOOK_SECRET": Self.webhookSecret,
            "PP_POSTGRES_URL": "postgres://app:s3cret@db/pages", "CONTENTFUL_ACCESS_TOKEN": "cda-token",
        ])
        #expect(secrets.visitorStateKeys == [Self.key, Self.otherKey])
        #expect(secrets.ofrepTokens == ["token-one"] && secrets.ofrepAPIKeys == ["key-one", "key-two"])
        #expect(secrets.webhookSecret == Self.webhookSecret && secrets.contentfulAccessToken == "cda-token")
        #expect(secrets.postgresURL == "postgres://app:s3cret@db/pages")
        #expect(secrets.warnings.isEmpty)
        #expect(try PersonalizedPagesCommand.parse([]).secrets(environment: [:]) == CommandSecrets(
            visitorStateKeys: [], ofrepTokens: [], ofrepAPIKeys: [], webhookSecret: nil, postgresURL: nil,
            contentfulAccessToken: nil, warnings: []))
    }

    @Test func aSecretGivenAsAnArgumentIsAcceptedWithAWarning() throws {
        let command = try PersonalizedPagesCommand.parse([
            "--visitor-state-key", Self.key, "--ofrep-token", "token-one", "--ofrep-api-key", "key-one",
            "--contentful-webhook-secret", Self.webhookSecret, "--postgres", "postgres://app:s3cret@db/pages",
        ])
        let secrets = try command.secrets(environment: ["PP_VISITOR_STATE_KEYS": Self.otherKey])
        #expect(secrets.visitorStateKeys == [Self.key], "the argument wins over the environment")
        #expect(secrets.ofrepTokens == ["token-one"] && secrets.webhookSecret == Self.webhookSecret)
        #expect(secrets.warnings.count == 5)
        for flag in ["--visitor-state-key", "--ofrep-token", "--ofrep-api-key", "--contentful-webhook-secret", "--postgres"] {
            let warning = secrets.warnings.first { $0.hasPrefix("warning: \(flag) was given as an argument") }
            #expect(warning?.contains("\(flag)-file") == true, "\(flag): \(secrets.warnings)")
        }
        // No secret's value is in a warning.
        #expect(!secrets.warnings.contains { $0.contains(Self.key) || $0.contains("token-one") || $0.contains("s3cret") })
        // A PostgreSQL URL without a password is no secret.
        let plain = try PersonalizedPagesCommand.parse(["--postgres", "postgres://app@db/pages"]).secrets(environment: [:])
        #expect(plain.postgresURL == "postgres://app@db/pages" && plain.warnings.isEmpty)
    }

    @Test func anArgumentAndAFileTogetherOrABadFileAreValidationErrors() throws {
        /// The message `parse(_:)` (which runs `validate()`) fails with, or nil when it parses.
        func refusal(_ arguments: [String]) -> String? {
            do {
                _ = try PersonalizedPagesCommand.parse(arguments)
                return nil
            } catch {
                return PersonalizedPagesCommand.message(for: error)
            }
        }
        try withFiles(["keys": "\(Self.key)\n", "empty": "\n", "short": "too-short\n"]) { paths in
            let both = refusal(["--visitor-state-key", Self.key, "--visitor-state-key-file", paths["keys"]!])
            #expect(both?.contains("give either --visitor-state-key or --visitor-state-key-file") == true, "\(both ?? "parsed")")
            let empty = refusal(["--ofrep-token-file", paths["empty"]!])
            #expect(empty?.contains("--ofrep-token-file") == true && empty?.contains("holds no value") == true, "\(empty ?? "parsed")")
            let missing = refusal(["--contentful-webhook-secret-file", paths["keys"]! + ".missing"])
            #expect(missing?.contains("--contentful-webhook-secret-file: cannot read") == true, "\(missing ?? "parsed")")
            // A short webhook secret in a file is refused as one given as an argument is; the
            // message never carries a secret.
            let short = refusal(["--contentful-webhook-secret-file", paths["short"]!])
            #expect(short?.contains("64 characters") == true && short?.contains("too-short") == false, "\(short ?? "parsed")")
            let keys = refusal(["--visitor-state-key-file", paths["short"]!])
            #expect(keys != nil && keys?.contains("too-short") == false, "\(keys ?? "parsed")")
            #expect(refusal(["--visitor-state-key-file", paths["keys"]!]) == nil)
        }
    }

    @Test func fileSecretsReachTheAppConfiguration() throws {
        try withFiles(["keys": "\(Self.key)\n", "tokens": "token-one\n"]) { paths in
            let command = try PersonalizedPagesCommand.parse(["--visitor-state-key-file", paths["keys"]!, "--ofrep-token-file", paths["tokens"]!])
            let configuration = command.appConfiguration(secrets: try command.secrets(environment: [:]))
            #expect(configuration.visitorStateKeys == [Self.key])
            #expect(configuration.ofrepCredentials.count == 1)
        }
    }

    @Test func theIdleTimeoutFlagSetsTheConfigurationAndIsBounded() throws {
        let none = CommandSecrets(visitorStateKeys: [], ofrepTokens: [], ofrepAPIKeys: [], webhookSecret: nil, postgresURL: nil, contentfulAccessToken: nil, warnings: [])
        #expect(try PersonalizedPagesCommand.parse([]).appConfiguration(secrets: none).idleTimeout == .seconds(30))
        #expect(try PersonalizedPagesCommand.parse(["--idle-timeout-ms", "5000"]).appConfiguration(secrets: none).idleTimeout == .seconds(5))
        #expect(throws: (any Error).self) { try PersonalizedPagesCommand.parse(["--idle-timeout-ms", "0"]) }
    }

    /// The real executable prints the warning on stderr at start-up (and still starts).
    @Test func theExecutableWarnsOnStderrAboutASecretArgument() async throws {
        let executable = GracefulShutdownTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the package first: \(executable.path)")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--port", "0", "--engines", "1", "--log-level", "warning", "--ofrep-api-key", "key-given-as-an-argument-0123456789"]
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let (chunks, continuation) = AsyncStream<Data>.makeStream()
        stderr.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { continuation.finish() } else { continuation.yield(data) }
        }
        defer { stderr.fileHandleForReading.readabilityHandler = nil }
        let line = try await withHangBound {
            var text = ""
            for await chunk in chunks {
                text += String(decoding: chunk, as: UTF8.self)
                if let line = text.split(separator: "\n").first(where: { $0.contains("--ofrep-api-key was given as an argument") }) {
                    return String(line)
                }
            }
            return text
        }
        #expect(line.hasPrefix("personalized-pages: warning: --ofrep-api-key was given as an argument"), "\(line)")
        #expect(line.contains("--ofrep-api-key-file") && !line.contains("key-given-as-an-argument"))
    }
}
