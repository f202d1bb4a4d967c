import ArgumentParser
import Foundation
import Logging
import Metrics
import Optimization
import PersonalizedPagesApp
import Prometheus

/// `personalized-pages`: serves personalized pages until SIGTERM/SIGINT (graceful: in-flight
/// requests finish, queued events are flushed). Prints `listening on http://HOST:PORT` on stdout
/// once the public server is bound and, with `--metrics-port`, `metrics on http://HOST:PORT` once
/// the metrics listener is (in either order); logs go to stderr. Every flag can also come from the environment
/// variable named in its help.
@main
struct PersonalizedPagesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "personalized-pages",
        abstract: "A Hummingbird service rendering personalized pages with the Optimization engine.")

    private static let environment = ProcessInfo.processInfo.environment

    @Option(help: "Port to bind on 127.0.0.1; 0 picks a free one (env PP_PORT).")
    var port: Int = Int(environment["PP_PORT"] ?? "") ?? 8080

    @Option(help: "Address to bind (env PP_HOST).")
    var host: String = environment["PP_HOST"] ?? "127.0.0.1"

    @Option(help: "Port of the metrics listener (GET /metrics, never on the public port); 0 picks a free one; without it no metrics are served (env PP_METRICS_PORT).")
    var metricsPort: Int?

    @Option(help: "Address the metrics listener binds (env PP_METRICS_HOST).")
    var metricsHost: String = environment["PP_METRICS_HOST"] ?? "127.0.0.1"

    @Option(help: "Optimization client id (env PP_CLIENT_ID).")
    var clientId: String = environment["PP_CLIENT_ID"] ?? "personalized-pages"

    @Option(help: "Optimization environment (env PP_ENVIRONMENT).")
    var environment: String = environment["PP_ENVIRONMENT"] ?? "main"

    @Option(help: "Experience API base URL (env PP_EXPERIENCE_BASE_URL); default: the real API.")
    var experienceBaseURL: String?

    @Option(help: "Insights API base URL (env PP_INSIGHTS_BASE_URL); default: the real API.")
    var insightsBaseURL: String?

    @Option(help: "JavaScript engines in the pool; default one per core (env PP_ENGINES).")
    var engines: Int?

    @Option(help: "Latency budget of each Experience call, in ms (env PP_EXPERIENCE_TIMEOUT_MS).")
    var experienceTimeoutMs: Int = Int(environment["PP_EXPERIENCE_TIMEOUT_MS"] ?? "") ?? 800

    @Option(help: "The repository's Fixtures/ folder (env PP_FIXTURES).")
    var fixtures: String = environment["PP_FIXTURES"] ?? AppConfiguration.defaultFixturesDirectory.path

    @Option(help: "Contentful space of the live entries at /cms/{id} (env PP_CONTENTFUL_SPACE); the token comes from CONTENTFUL_ACCESS_TOKEN.")
    var contentfulSpace: String? = environment["PP_CONTENTFUL_SPACE"]

    @Option(help: "Contentful environment of the live entries (env PP_CONTENTFUL_ENVIRONMENT).")
    var contentfulEnvironment: String = environment["PP_CONTENTFUL_ENVIRONMENT"] ?? "master"

    @Option(help: "Content Delivery API base URL, e.g. a local test server (env PP_CONTENTFUL_BASE_URL); default: the real API.")
    var contentfulBaseURL: String? = environment["PP_CONTENTFUL_BASE_URL"]

    @Option(help: "The space's webhook signing secret (64 characters; env CONTENTFUL_WEBHOOK_SECRET): POST /webhooks/contentful accepts only requests Contentful signed with it. Without it the route is not mounted unless --insecure-webhook is given.")
    var contentfulWebhookSecret: String?

    @Flag(help: "With --contentful-space and no webhook secret: mount POST /webhooks/contentful without authentication (local development only: anyone who reaches it can invalidate entries).")
    var insecureWebhook = false

    @Option(help: "PostgreSQL URL shared by the replicas: the event outbox, and with --contentful-space the entry store and invalidations (env PP_POSTGRES_URL).")
    var postgres: String? = environment["PP_POSTGRES_URL"]

    @Option(help: "With --postgres: how long a replica's claim on shared-outbox events lasts, in ms; after a replica died the others deliver its events once it passed (env PP_OUTBOX_LEASE_MS).")
    var outboxLeaseMs: Int = Int(environment["PP_OUTBOX_LEASE_MS"] ?? "") ?? 30_000

    @Option(help: ArgumentHelp(
        "A key signing visitor-state cookies and replay tickets: base64 of at least 32 bytes (openssl rand -base64 32). Repeat to rotate: the first signs, all verify. Env PP_VISITOR_STATE_KEYS (comma-separated). Without one, a random per-process key.",
        valueName: "base64"))
    var visitorStateKey: [String] = []

    @Option(help: "How long a /first page's replay ticket may be committed, in ms (env PP_REPLAY_TICKET_LIFETIME_MS).")
    var replayTicketLifetimeMs: Int = Int(environment["PP_REPLAY_TICKET_LIFETIME_MS"] ?? "") ?? 600_000

    @Option(help: ArgumentHelp(
        "A bearer token OpenFeature clients present to POST /ofrep/v1/evaluate/flags[/{key}] (repeatable; env PP_OFREP_TOKENS, comma-separated). Without a token or --ofrep-api-key the OFREP routes are not mounted.",
        valueName: "token"))
    var ofrepToken: [String] = []

    @Option(help: ArgumentHelp("An X-API-Key OpenFeature clients may present to the OFREP routes instead (repeatable; env PP_OFREP_API_KEYS, comma-separated).", valueName: "key"))
    var ofrepApiKey: [String] = []

    @Flag(help: "Cookies without Secure, for plain-HTTP development (env PP_INSECURE_COOKIES=1).")
    var insecureCookies = false

    @Flag(help: "Send nothing before the visitor consents, not even the page view (env PP_STRICT_CONSENT=1).")
    var strictConsent = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (env LOG_LEVEL).")
    var logLevel: String = environment["LOG_LEVEL"] ?? "info"

    /// `--visitor-state-key`, else `PP_VISITOR_STATE_KEYS` split at commas.
    var visitorStateKeys: [String] {
        if !visitorStateKey.isEmpty { return visitorStateKey }
        return (Self.environment["PP_VISITOR_STATE_KEYS"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `--ofrep-token`s and `--ofrep-api-key`s, else `PP_OFREP_TOKENS` / `PP_OFREP_API_KEYS` split at commas.
    var ofrepCredentials: [OFREPConfiguration.Credential] {
        func list(_ given: [String], _ variable: String) -> [String] {
            if !given.isEmpty { return given }
            return (Self.environment[variable] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        return list(ofrepToken, "PP_OFREP_TOKENS").map { .bearerToken($0) } + list(ofrepApiKey, "PP_OFREP_API_KEYS").map { .apiKey($0) }
    }

    /// `--contentful-webhook-secret`, else `CONTENTFUL_WEBHOOK_SECRET`; nil when neither is set.
    var webhookSecret: String? {
        contentfulWebhookSecret ?? Self.environment["CONTENTFUL_WEBHOOK_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        if !visitorStateKeys.isEmpty {
            do {
                _ = try VisitorStateKeys(base64Encoded: visitorStateKeys)
            } catch {
                throw ValidationError("--visitor-state-key: \(error)")
            }
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        if let metricsPort = metricsPort ?? Int(Self.environment["PP_METRICS_PORT"] ?? ""), !(0...65535).contains(metricsPort) { throw ValidationError("--metrics-port must be 0...65535") }
        if let engines = engines ?? Int(Self.environment["PP_ENGINES"] ?? ""), engines < 1 { throw ValidationError("--engines must be at least 1") }
        guard outboxLeaseMs >= 100 else { throw ValidationError("--outbox-lease-ms must be at least 100") }
        guard replayTicketLifetimeMs >= 1000 else { throw ValidationError("--replay-ticket-lifetime-ms must be at least 1000") }
        guard experienceTimeoutMs > 0 else { throw ValidationError("--experience-timeout-ms must be positive") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        if contentfulSpace != nil, (Self.environment["CONTENTFUL_ACCESS_TOKEN"] ?? "").isEmpty {
            throw ValidationError("--contentful-space needs the environment variable CONTENTFUL_ACCESS_TOKEN")
        }
        if let secret = webhookSecret {
            guard secret.utf16.count == 64 else { throw ValidationError("the webhook signing secret must be exactly 64 characters") }
            if insecureWebhook { throw ValidationError("give either a webhook signing secret or --insecure-webhook, not both") }
        }
    }

    func run() async throws {
        var logger = Logger(label: "personalized-pages", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let configuration = AppConfiguration(
            host: host, port: port, metricsHost: metricsHost, metricsPort: metricsPort ?? Int(Self.environment["PP_METRICS_PORT"] ?? ""), clientId: clientId, environment: environment,
            experienceBaseURL: experienceBaseURL ?? Self.environment["PP_EXPERIENCE_BASE_URL"],
            insightsBaseURL: insightsBaseURL ?? Self.environment["PP_INSIGHTS_BASE_URL"],
            engines: engines ?? Int(Self.environment["PP_ENGINES"] ?? ""),
            experienceTimeout: .milliseconds(experienceTimeoutMs),
            fixturesDirectory: URL(fileURLWithPath: fixtures, isDirectory: true),
            contentful: contentfulSpace.map {
                ContentfulSettings(spaceId: $0, environment: contentfulEnvironment,
                                   accessToken: Self.environment["CONTENTFUL_ACCESS_TOKEN"] ?? "", baseURL: contentfulBaseURL,
                                   webhook: webhookSecret.map { .signed(secret: $0) } ?? (insecureWebhook ? .unsigned : nil))
            },
            postgresURL: postgres,
            sharedOutboxLease: .milliseconds(outboxLeaseMs),
            visitorStateKeys: visitorStateKeys,
            secureCookies: !(insecureCookies || Self.environment["PP_INSECURE_COOKIES"] == "1"),
            replayTicketLifetime: .milliseconds(replayTicketLifetimeMs),
            ofrepCredentials: ofrepCredentials,
            strictConsent: strictConsent || Self.environment["PP_STRICT_CONSENT"] == "1")
        // The process's metrics backend: GET /metrics of the metrics listener serves this registry.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let app: PersonalizedPagesApp
        do {
            app = try PersonalizedPagesApp(configuration: configuration, metricsRegistry: registry, logger: logger)
        } catch {
            throw ValidationError("\(error)")
        }
        let host = self.host
        let metricsHost = self.metricsHost
        // Unbuffered, one write per line, so a test or script reading a pipe sees each line at once.
        try await app.run(
            onListening: { port in
                try? FileHandle.standardOutput.write(contentsOf: Data("listening on http://\(host):\(port)\n".utf8))
            },
            onMetricsListening: { port in
                try? FileHandle.standardOutput.write(contentsOf: Data("metrics on http://\(metricsHost):\(port)\n".utf8))
            })
    }
}
