import Foundation
import NIOSSL
import PostgresNIO

/// How an ``OptimizationDatabase`` reaches PostgreSQL and how long its operations may take.
/// Units are in the names.
public struct PostgresConfiguration: Sendable {
    /// Where the server is and who connects: `host`, `port` (5432), `username`, `password`,
    /// `database` and the TLS mode, parsed from the connection string.
    public let connection: PostgresClient.Configuration
    /// The connection string's text with the password removed (for logs).
    public let redactedConnectionString: String
    /// Most pooled connections this replica opens (the LISTEN connection of the invalidation bus
    /// is one more). Default 8. Validated by the initializer (at least 1) and fixed after it.
    public let poolSize: Int
    /// The schema holding this integration's tables (created when missing). Default
    /// `optimization`. Lower-case letters, digits and `_`, starting with a letter, at most 48
    /// characters: validated by the initializer and fixed after it (it is written into SQL
    /// statements as an identifier).
    public let schema: String
    /// Bound of one store operation (a read, a write, an invalidation, an outbox call) including
    /// waiting for a connection: when PostgreSQL is unreachable the operation gives up after it
    /// (reads answer "nothing stored"). Default 2 s.
    public var operationTimeout: Duration
    /// How long a replica waits for another replica's claim on the same entry before fetching it
    /// itself; also how long a claim lives, so the claim of a replica that died expires. Default 5 s.
    public var fetchClaimTimeout: Duration
    /// First delay before the invalidation bus reconnects after losing its connection; doubled
    /// per failed attempt up to ``maximumReconnectDelay``. Default 100 ms.
    public var reconnectDelay: Duration
    /// Largest reconnect delay of the invalidation bus. Default 5 s.
    public var maximumReconnectDelay: Duration
    /// How often the invalidation bus checks that its connection is alive (a query bounded by
    /// ``operationTimeout``). Default 5 s.
    public var heartbeatInterval: Duration

    /// A configuration from a connection string
    /// `postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require|verify-full]`
    /// (`postgresql://` too; `sslmode` defaults to `prefer`; `require` encrypts without verifying the
    /// certificate, `verify-ca`/`verify-full` verify it). Each other parameter sets the property of
    /// the same name.
    /// - Throws: ``PostgresIntegrationError/invalidConfiguration(_:)`` for a string that is not such a
    ///   URL, an unknown `sslmode`, a pool size below 1 or a schema name that is not an identifier.
    public init(
        connectionString: String,
        poolSize: Int = 8,
        schema: String = "optimization",
        operationTimeout: Duration = .seconds(2),
        fetchClaimTimeout: Duration = .seconds(5),
        reconnectDelay: Duration = .milliseconds(100),
        maximumReconnectDelay: Duration = .seconds(5),
        heartbeatInterval: Duration = .seconds(5)
    ) throws(PostgresIntegrationError) {
        guard poolSize >= 1 else { throw .invalidConfiguration("the pool size must be at least 1, not \(poolSize)") }
        guard !schema.isEmpty, schema.count <= 48,
              schema.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }),
              !(schema.first?.isNumber ?? true)
        else { throw .invalidConfiguration("the schema name must be lower-case letters, digits and _, starting with a letter") }
        guard let url = URLComponents(string: connectionString), url.scheme == "postgres" || url.scheme == "postgresql",
              let host = url.host, !host.isEmpty
        else { throw .invalidConfiguration("the connection string is not postgres://user@host[:port]/database") }
        guard let user = url.user, !user.isEmpty else { throw .invalidConfiguration("the connection string names no user") }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        let sslMode = url.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer"
        var unverified = TLSConfiguration.makeClientConfiguration()
        unverified.certificateVerification = .none
        let tls: PostgresClient.Configuration.TLS
        let tlsConfiguration: TLSConfiguration?
        switch sslMode {
        case "disable": (tls, tlsConfiguration) = (.disable, nil)
        case "allow", "prefer": (tls, tlsConfiguration) = (.prefer(unverified), unverified)
        case "require": (tls, tlsConfiguration) = (.require(unverified), unverified)
        case "verify-ca", "verify-full": (tls, tlsConfiguration) = (.require(.makeClientConfiguration()), .makeClientConfiguration())
        default: throw .invalidConfiguration("unknown sslmode \(sslMode)")
        }
        // The bus's LISTEN connection is not pooled: it gets the same mode and TLS settings.
        do {
            switch (sslMode, tlsConfiguration) {
            case (_, nil): listenTLS = .disable
            case ("allow", let settings?), ("prefer", let settings?): listenTLS = .prefer(try NIOSSLContext(configuration: settings))
            case (_, let settings?): listenTLS = .require(try NIOSSLContext(configuration: settings))
            }
        } catch {
            throw .invalidConfiguration("the TLS settings of sslmode \(sslMode) cannot be used: \(error)")
        }
        var connection = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password,
            database: database.isEmpty ? nil : database.removingPercentEncoding, tls: tls)
        connection.options.maximumConnections = poolSize
        connection.options.connectTimeout = operationTimeout
        self.connection = connection
        var redacted = url
        if redacted.password != nil { redacted.password = "***" }
        redactedConnectionString = redacted.string ?? "postgres://\(host)"
        self.poolSize = poolSize
        self.schema = schema
        self.operationTimeout = operationTimeout
        self.fetchClaimTimeout = fetchClaimTimeout
        self.reconnectDelay = reconnectDelay
        self.maximumReconnectDelay = maximumReconnectDelay
        self.heartbeatInterval = heartbeatInterval
    }

    /// The TLS mode of the LISTEN connection: the pool's (``connection``), from `sslmode`.
    let listenTLS: PostgresConnection.Configuration.TLS

    /// The NOTIFY channel of invalidations: `<schema>_invalidations`.
    public var invalidationChannel: String { "\(schema)_invalidations" }

    /// The configuration of a single (non-pooled) connection, for the LISTEN connection: the
    /// pool's server, credentials and TLS mode.
    var singleConnection: PostgresConnection.Configuration {
        var single = PostgresConnection.Configuration(
            host: connection.host ?? "127.0.0.1", port: connection.port ?? 5432, username: connection.username,
            password: connection.password, database: connection.database, tls: listenTLS)
        single.options.connectTimeout = .init(operationTimeout)
        return single
    }
}
