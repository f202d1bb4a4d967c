import Foundation
@testable import OptimizationPostgres
import PostgresNIO
import PostgresTestServer
import Testing

@Suite struct SchemaAndConfigurationTests {
    @Test func connectionStringsAreParsedAndBadOnesRefused() throws {
        let configuration = try PostgresConfiguration(connectionString: "postgresql://app:s3cret@db.internal:6543/content?sslmode=require", poolSize: 3)
        #expect(configuration.connection.host == "db.internal" && configuration.connection.port == 6543)
        #expect(configuration.connection.username == "app" && configuration.connection.password == "s3cret")
        #expect(configuration.connection.database == "content" && configuration.poolSize == 3)
        #expect(configuration.connection.options.maximumConnections == 3)
        #expect(!configuration.redactedConnectionString.contains("s3cret"))
        #expect(configuration.invalidationChannel == "optimization_invalidations")
        for bad in ["mysql://app@db/content", "postgres:///content", "postgres://db/content", "postgres://app@db/content?sslmode=maybe"] {
            #expect(throws: PostgresIntegrationError.self) { try PostgresConfiguration(connectionString: bad) }
        }
        #expect(throws: PostgresIntegrationError.self) { try PostgresConfiguration(connectionString: "postgres://app@db/c", poolSize: 0) }
        #expect(throws: PostgresIntegrationError.self) { try PostgresConfiguration(connectionString: "postgres://app@db/c", schema: "x; DROP") }
    }

    @Test func anInvalidSchemaNameIsRefusedAndTheValidatedSettingsCannotBeReassigned() throws {
        let tooLong = String(repeating: "a", count: 49)
        for bad in ["", "Optimization", "1abc", "a-b", "x; DROP", "schema.name", "é", tooLong] {
            #expect("\(bad) is refused", performing: { try PostgresConfiguration(connectionString: "postgres://app@db/c", schema: bad) },
                    throws: { error in
                        guard case .invalidConfiguration = error as? PostgresIntegrationError else { return false }
                        return true
                    })
        }
        let configuration = try PostgresConfiguration(connectionString: "postgres://app@db/c", poolSize: 2, schema: "tenant_2")
        #expect(configuration.schema == "tenant_2" && configuration.invalidationChannel == "tenant_2_invalidations")
        // What the initializer validated has no setter: the schema is written into SQL as an
        // identifier, so it must stay the validated value.
        let schema: AnyKeyPath = \PostgresConfiguration.schema
        let poolSize: AnyKeyPath = \PostgresConfiguration.poolSize
        #expect(!(schema is WritableKeyPath<PostgresConfiguration, String>))
        #expect(!(poolSize is WritableKeyPath<PostgresConfiguration, Int>))
    }

    @Test func theListenConnectionHasThePoolsTLSMode() throws {
        func listen(_ mode: String) throws -> PostgresConnection.Configuration.TLS {
            try PostgresConfiguration(connectionString: "postgres://app@db/c?sslmode=\(mode)").singleConnection.tls
        }
        #expect(try !listen("disable").isAllowed)
        #expect(try listen("prefer").isAllowed && !listen("prefer").isEnforced)
        #expect(try listen("require").isEnforced)
        #expect(try listen("verify-full").isEnforced)
    }

    @Test func replicasStartingAtOnceMigrateOnceAndAgainIsNothing() async throws {
        try await withPostgresTestServer { server in
            let databases = try (0..<4).map { _ in OptimizationDatabase(configuration: try testConfiguration(server), logger: quietLogger) }
            let found = try await withThrowingTaskGroup(of: Int.self) { group in
                for database in databases { group.addTask { try await database.start() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Exactly one replica created the tables; the others found them.
            #expect(found.sorted() == [0, PostgresSchema.currentVersion, PostgresSchema.currentVersion, PostgresSchema.currentVersion])
            #expect(try await databases[0].start() == PostgresSchema.currentVersion)
            #expect(try await databases[1].schemaVersion() == PostgresSchema.currentVersion)
            // A schema newer than this build is refused.
            try await databases[0].client.query("UPDATE optimization.schema_version SET version = 99")
            let newer = OptimizationDatabase(configuration: try testConfiguration(server), logger: quietLogger)
            await #expect(throws: PostgresIntegrationError.schemaTooNew(found: 99, supported: PostgresSchema.currentVersion)) { try await newer.start() }
            await newer.shutdown()
            for database in databases { await database.shutdown() }
        }
    }

    @Test func anUnreachableDatabaseFailsStartWithinItsBound() async throws {
        let port = try PostgresTestServer.freeLoopbackPort()
        let database = OptimizationDatabase(
            configuration: try PostgresConfiguration(connectionString: "postgres://postgres@127.0.0.1:\(port)/postgres?sslmode=disable",
                                                     operationTimeout: .milliseconds(100)),
            logger: quietLogger)
        let started = ContinuousClock.now
        await #expect(throws: PostgresIntegrationError.self) { try await database.start() }
        #expect(ContinuousClock.now - started < .seconds(30))
        await database.shutdown()
    }
}
