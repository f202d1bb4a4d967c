import Foundation
import OptimizationTesting
import PersonalizedPagesApp
import Prometheus
import Testing

/// Both listeners close a connection that sent half a request line and nothing more, once
/// ``AppConfiguration/idleTimeout`` passed (issue 46, F8: 300 such connections stayed open).
/// The real listeners on loopback; the wait is a read until the server closes, bounded only
/// against a hang (minutes, where the timeout is a fraction of a second).
@Suite(.hangBound) struct IdleTimeoutTests {
    static let idleTimeout: Duration = .milliseconds(300)

    @Test func theDefaultIdleTimeoutIsThirtySeconds() {
        #expect(AppConfiguration().idleTimeout == .seconds(30))
    }

    @Test func halfOpenConnectionsAreClosedOnBothListeners() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server, metricsRegistry: PrometheusCollectorRegistry(), configure: { $0.idleTimeout = Self.idleTimeout }) { listeners, _ in
                let metricsURL = try #require(listeners.metricsURL)
                for url in [listeners.baseURL, metricsURL] {
                    let port = try #require(URL(string: url)?.port)
                    let started = ContinuousClock.now
                    let connection = try HalfOpenConnection(port: port, sending: Array("GET /metr".utf8))
                    // Ends when the server closes (or resets) the connection; without an idle
                    // timeout it never does, and the hang bound fails the test.
                    let end = try await withHangBound { await connection.readUntilClosed() }
                    let elapsed = ContinuousClock.now - started
                    #expect(elapsed >= Self.idleTimeout, "\(url): closed after \(elapsed), before the idle timeout (\(end))")
                }
            }
        }
    }

    @Test func aKeepAliveConnectionAnswersThenClosesWhenIdle() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server, configure: { $0.idleTimeout = Self.idleTimeout }) { baseURL, _ in
                let port = try #require(URL(string: baseURL)?.port)
                let connection = try HalfOpenConnection(
                    port: port, sending: Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
                let end = try await withHangBound { await connection.readUntilClosed() }
                guard case .closed(let bytes) = end else { Issue.record("\(end)"); return }
                #expect(bytes > 0, "the request was answered before the idle connection was closed")
            }
        }
    }
}
