import Foundation

/// Where the PostgreSQL server binaries (`initdb`, `postgres`) are. Looked up in this order:
/// `$OPTIMIZATION_PG_BINDIR`; `pg_config --bindir`; the newest `/usr/lib/postgresql/<version>/bin`
/// (Debian's layout); then `PATH`. The first directory holding both binaries wins.
public struct PostgresBinaries: Sendable, Equatable {
    /// The directory the binaries were found in.
    public let directory: URL

    /// `initdb` in ``directory``.
    public var initdb: URL { directory.appendingPathComponent("initdb") }
    /// `postgres` in ``directory``.
    public var postgres: URL { directory.appendingPathComponent("postgres") }

    /// The binaries, found as the type describes.
    /// - Throws: ``PostgresTestServerError/binaryNotFound(_:)`` when no candidate holds both.
    public static func locate() throws -> PostgresBinaries {
        for candidate in candidateDirectories() where holdsServer(candidate) {
            return PostgresBinaries(directory: URL(fileURLWithPath: candidate, isDirectory: true))
        }
        throw PostgresTestServerError.binaryNotFound("initdb and postgres")
    }

    static func candidateDirectories() -> [String] {
        var candidates: [String] = []
        let environment = ProcessInfo.processInfo.environment
        if let configured = environment["OPTIMIZATION_PG_BINDIR"], !configured.isEmpty { candidates.append(configured) }
        if let pgConfig = try? PostgresTestServer.which("pg_config") {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: pgConfig)
            process.arguments = ["--bindir"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            if (try? process.run()) != nil {
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                let directory = text.trimmingCharacters(in: .whitespacesAndNewlines)
                if process.terminationStatus == 0, !directory.isEmpty { candidates.append(directory) }
            }
        }
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap(Int.init).sorted(by: >)
        candidates += versions.map { "/usr/lib/postgresql/\($0)/bin" }
        candidates += (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return candidates
    }

    static func holdsServer(_ directory: String) -> Bool {
        FileManager.default.isExecutableFile(atPath: directory + "/initdb")
            && FileManager.default.isExecutableFile(atPath: directory + "/postgres")
    }
}
