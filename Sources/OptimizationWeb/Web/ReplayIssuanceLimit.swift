import OrderedCollections
import Synchronization
import HostPlatform

/// How many replay tickets one client may be issued: at most ``ticketsPerWindow`` in each
/// ``window`` per client key (the app chooses the key: the connection's address, or a proxy's
/// forwarded address it trusts). A client past its bound gets pages without a ticket (their
/// replay is not committed), so a client that fetches ticket after ticket without cookies cannot
/// fill the record of committed tickets for everyone.
///
/// At most ``maximumClients`` clients are tracked; the least recently started windows leave
/// first, and expired windows leave in one removal.
///
/// **Threading.** Thread-safe: the lock is held for one lookup and update.
public final class ReplayIssuanceLimit: Sendable {
    /// Tickets one client may be issued per window.
    public let ticketsPerWindow: Int
    /// The length of a client's window.
    public let window: Duration
    /// The most clients tracked at once.
    public let maximumClients: Int
    private let clock: any HostClock
    private let windowMilliseconds: Double
    /// Client → (start of its window, tickets issued in it), in window-start order.
    private let windows = Mutex<OrderedDictionary<String, Window>>([:])

    private struct Window {
        var start: Double
        var issued: Int
    }

    /// - Parameters:
    ///   - ticketsPerWindow: tickets per client per window; at least 1; default 30.
    ///   - window: the window's length; default one minute.
    ///   - maximumClients: clients tracked at once; default 100,000.
    ///   - clock: the time of windows.
    public init(ticketsPerWindow: Int = 30, window: Duration = .seconds(60), maximumClients: Int = 100_000, clock: any HostClock = SystemClock()) {
        self.ticketsPerWindow = max(1, ticketsPerWindow)
        self.window = window
        self.maximumClients = max(1, maximumClients)
        self.clock = clock
        windowMilliseconds = max(1, window.inMilliseconds)
    }

    /// Counts one ticket for `client`; false (nothing counted) when the client had its bound in
    /// the current window.
    public func admit(client: String) -> Bool {
        let now = clock.now()
        return windows.withLock { windows in
            let limit = now - windowMilliseconds
            let expired = windows.expiredPrefixCount { $0.start <= limit }
            if expired > 0 { windows.removeFirst(expired) }
            if var current = windows[client] {
                guard current.issued < ticketsPerWindow else { return false }
                current.issued += 1
                windows[client] = current
                return true
            }
            if windows.count >= maximumClients { windows.removeFirst(windows.count - maximumClients + 1) }
            windows[client] = Window(start: now, issued: 1)
            return true
        }
    }

    /// Clients tracked now.
    public var clientCount: Int { windows.withLock { $0.count } }
}
