/// Why an outbox operation failed. Every failure of the file system is one of these; nothing in
/// the outbox traps on bad input or bad files.
public enum OutboxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process holds the directory's lock file. Only one outbox may own a directory at a
    /// time.
    case directoryLocked(path: String)
    /// Another ``DurableOutbox`` of this process owns the directory (reached by this or another
    /// path): close it first.
    case directoryOwnedInThisProcess(path: String)
    /// The directory or its lock file could not be created or opened (`errno` from the system).
    case cannotOpen(path: String, errno: Int32)
    /// Writing, syncing or removing a file failed (`errno` from the system, e.g. `ENOSPC`).
    /// After a failed append nothing of that event is kept.
    case ioFailure(path: String, operation: String, errno: Int32)
    /// The event is larger than ``OutboxConfiguration/maxBytes`` or the frame limit (16 MiB).
    case eventTooLarge(bytes: Int, limit: Int)
    /// The event cannot be stored as given (empty or over-long `messageId` or profile id).
    case invalidEvent(String)
    /// The outbox was closed.
    case closed

    public var description: String {
        switch self {
        case .directoryLocked(let path):
            return "the outbox directory \(path) is in use by another process (its lock file is held)"
        case .directoryOwnedInThisProcess(let path):
            return "the outbox directory \(path) is already open in this process (close that outbox first)"
        case .cannotOpen(let path, let code):
            return "cannot open the outbox at \(path): \(Self.describe(code))"
        case .ioFailure(let path, let operation, let code):
            return "outbox \(operation) failed for \(path): \(Self.describe(code))"
        case .eventTooLarge(let bytes, let limit):
            return "the event takes \(bytes) bytes in the outbox, more than its limit of \(limit)"
        case .invalidEvent(let reason):
            return "the event cannot be stored in the outbox: \(reason)"
        case .closed:
            return "the outbox is closed"
        }
    }

    private static func describe(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
