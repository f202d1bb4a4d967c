/// Why an ``OptimizationDatabase`` operation failed. Messages never contain a password or
/// visitor data.
public enum PostgresIntegrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration cannot be used (connection string, pool size, schema name).
    case invalidConfiguration(String)
    /// The operation did not finish within ``PostgresConfiguration/operationTimeout`` (PostgreSQL
    /// is unreachable or overloaded).
    case timedOut(operation: String)
    /// PostgreSQL answered with an error, or the connection failed.
    case database(operation: String, detail: String)
    /// ``OptimizationDatabase/start()`` was not called, or ``OptimizationDatabase/shutdown()`` was.
    case notRunning
    /// The schema in the database is newer than this build knows (another replica runs a newer
    /// version); `found` is its version, `supported` this build's.
    case schemaTooNew(found: Int, supported: Int)

    /// A sentence naming the failure.
    public var description: String {
        switch self {
        case .invalidConfiguration(let detail): "invalid PostgreSQL configuration: \(detail)"
        case .timedOut(let operation): "PostgreSQL \(operation) did not finish in time"
        case .database(let operation, let detail): "PostgreSQL \(operation) failed: \(detail)"
        case .notRunning: "the PostgreSQL integration is not running"
        case .schemaTooNew(let found, let supported): "the database schema is version \(found); this build supports up to \(supported)"
        }
    }
}
