/// When an appended event reaches the disk. ``DurableOutbox/append(_:)`` always returns after
/// the event was handed to the operating system with `write(2)` (never buffered in the process),
/// so **every policy keeps every accepted event across a crash or SIGKILL of the process**; the
/// policies differ only in what survives a crash of the machine (power loss, kernel panic).
public enum OutboxDurability: Sendable, Equatable, CustomStringConvertible {
    /// `write(2)` on every append, no `fsync`: the kernel writes the page cache back on its own
    /// schedule (typically within 5–30 s). Fastest; a machine crash can lose the last seconds.
    case writeOnly
    /// `fsync(2)` before every append (or batch append) returns: nothing accepted is lost even on
    /// power loss, at the cost of one disk flush per call (milliseconds on most disks).
    case syncEveryAppend
    /// `write(2)` on every append and `fsync(2)` of the written data at most `milliseconds` later,
    /// on the outbox's clock, off the appending thread: a machine crash loses at most the last
    /// `milliseconds` of events. The default, with 1,000 ms.
    case syncInterval(milliseconds: Int)

    /// The default: ``syncInterval(milliseconds:)`` with 1,000 ms (see <doc:TheDurableOutbox> for the
    /// measurements behind it).
    public static let `default` = OutboxDurability.syncInterval(milliseconds: 1_000)

    public var description: String {
        switch self {
        case .writeOnly: return "writeOnly"
        case .syncEveryAppend: return "syncEveryAppend"
        case .syncInterval(let milliseconds): return "syncInterval(\(milliseconds) ms)"
        }
    }
}
