import Logging
import Synchronization

/// Records everything logged through its ``logger``: for tests that assert what is (and, for
/// privacy, what is not) logged at which level. Thread-safe.
///
/// ```swift
/// let logs = LogRecorder()
/// let client = OptimizationClient(environment: .init(logger: logs.logger))
/// …
/// #expect(!logs.all.contains { $0.level > .debug && $0.text.contains("secret-trait") })
/// ```
public final class LogRecorder: Sendable {
    /// One log call as recorded.
    public struct Record: Sendable {
        /// The level the call logged at.
        public let level: Logger.Level
        /// The logged message.
        public let message: String
        /// The call's metadata merged with the logger's and its metadata provider's; on a
        /// conflicting key the call's value wins, then the logger's.
        public let metadata: Logger.Metadata
        /// The message followed by its metadata, for searching both at once.
        public var text: String { metadata.isEmpty ? message : "\(message) \(metadata)" }
    }

    private let records = Mutex<[Record]>([])

    /// Creates a recorder with no records.
    public init() {}

    /// Every record so far, oldest first.
    public var all: [Record] { records.withLock { $0 } }

    /// A logger (log level `trace`) whose output lands in ``all``.
    public func logger(label: String = "test") -> Logger {
        var logger = Logger(label: label) { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    /// ``logger(label:)`` with the default label.
    public var logger: Logger { logger() }

    fileprivate func append(_ record: Record) {
        records.withLock { $0.append(record) }
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        /// Task-scoped metadata (for example a request id) merged into every record.
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let provided = metadataProvider?.get() ?? [:]
            let merged = (event.metadata ?? [:]).merging(metadata) { call, _ in call }.merging(provided) { call, _ in call }
            recorder.append(Record(level: event.level, message: "\(event.message)", metadata: merged))
        }
    }
}
