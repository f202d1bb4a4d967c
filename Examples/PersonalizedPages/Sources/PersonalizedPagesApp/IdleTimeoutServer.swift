import HummingbirdCore
import NIOCore

extension PersonalizedPagesApp {
    /// The HTTP/1.1 server of both listeners: Hummingbird's, closing a connection that made no
    /// progress for `idleTimeout` (no complete request head since it opened, or nothing read or
    /// written since its last response; a request being answered is never cut). Without it a
    /// client holding connections open with half a request line keeps them forever (slowloris).
    /// A non-positive `idleTimeout` counts as 1 ms.
    static func server(idleTimeout: Duration) -> HTTPServerBuilder {
        .http1(configuration: HTTP1Channel.Configuration(idleTimeout: TimeAmount(max(idleTimeout, .milliseconds(1)))))
    }
}
