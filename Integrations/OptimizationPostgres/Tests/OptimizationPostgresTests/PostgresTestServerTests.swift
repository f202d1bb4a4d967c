import Foundation
@testable import OptimizationPostgres
import PostgresNIO
import PostgresTestServer
import Testing

@Suite struct PostgresTestServerTests {
    @Test func aPrivateServerStartsAnswersStopsAndLeavesNothing() async throws {
        let server = try PostgresTestServer()
        let directory = server.directory
        let database = OptimizationDatabase(configuration: try testConfiguration(server), logger: quietLogger)
        try await database.start()
        #expect(try await database.schemaVersion() >= 1)
        await database.shutdown()
        let pidFile = directory.appendingPathComponent("data/postmaster.pid")
        let pid = try #require(Int32(try String(contentsOf: pidFile, encoding: .utf8).split(separator: "\n")[0]))
        #expect(kill(pid, 0) == 0)
        // Not root: the server refuses to run as root.
        let owner = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("data").path)[.ownerAccountID] as? Int
        #expect(owner != 0)
        server.destroy()
        #expect(kill(pid, 0) != 0)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test func theServerComesBackWithItsDataOnTheSamePort() async throws {
        try await withPostgresTestServer { server in
            let database = OptimizationDatabase(configuration: try testConfiguration(server), logger: quietLogger)
            try await database.start()
            server.stop()
            await #expect(throws: PostgresIntegrationError.self) { try await database.schemaVersion() }
            try server.start()
            try await waitUntil("the pool reconnects") { (try? await database.schemaVersion()) == PostgresSchema.currentVersion }
            await database.shutdown()
        }
    }

    @Test func binariesAreFoundWithoutPATH() throws {
        let binaries = try PostgresBinaries.locate()
        #expect(FileManager.default.isExecutableFile(atPath: binaries.initdb.path))
        #expect(FileManager.default.isExecutableFile(atPath: binaries.postgres.path))
    }
}
