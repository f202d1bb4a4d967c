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
///
/// **Secrets** (visitor-state keys, OFREP credentials, the webhook signing secret, a PostgreSQL
/// URL with a password, the CDA token) come from the environment or from a `--…-file` option
/// (``CommandSecrets``, ``SecretSource``): every local user can read a process's arguments. One
/// given as an argument is still accepted, for local development, with a warning on stderr at
/// start-up.
///
/// **OpenTelemetry.** With `OTEL_EXPORTER_OTLP_ENDPOINT` set, traces and metrics are exported
/// over OTLP/HTTP as the `OTEL_*` variables say (``OTLPExport``); the exporters flush after the
/// Optimization service on shutdown. A start-up log line says whether export is on and where to.
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

    @Option(help: "Contentful space of the live entries at /cms/{id} (env PP_CONTENTFUL_SPACE); the token comes from CONTENTFUL_ACCESS_TOKEN or --contentful-access-token-file.")
    var contentfulSpace: String? = environment["PP_CONTENTFUL_SPACE"]

    @Option(help: ArgumentHelp("A file holding the Content Delivery API token (instead of CONTENTFUL_ACCESS_TOKEN; a trailing newline is ignored).", valueName: "path"))
    var contentfulAccessTokenFile: String?

    @Option(help: "Contentful environment of the live entries (env PP_CONTENTFUL_ENVIRONMENT).")
    var contentfulEnvironment: String = environment["PP_CONTENTFUL_ENVIRONMENT"] ?? "master"

    @Option(help: "Content Delivery API base URL, e.g. a local test server (env PP_CONTENTFUL_BASE_URL); default: the real API.")
    var contentfulBaseURL: String? = environment["PP_CONTENTFUL_BASE_URL"]

    @Option(help: "The space's webhook signing secret (64 characters): POST /webhooks/contentful accepts only requests Contentful signed with it. Without it the route is not mounted unless --insecure-webhook is given. Prefer env CONTENTFUL_WEBHOOK_SECRET or --contentful-webhook-secret-file: an argument is readable by every local user (a warning is printed).")
    var contentfulWebhookSecret: String?

    @Option(help: ArgumentHelp("A file holding the webhook signing secret (a trailing newline is ignored).", valueName: "path"))
    var contentfulWebhookSecretFile: String?

    @Flag(help: "With --contentful-space and no webhook secret: mount POST /webhooks/contentful without authentication (local development only: anyone who reaches it can invalidate entries).")
    var insecureWebhook = false

    @Option(help: "PostgreSQL URL shared by the replicas: the event outbox, and with --contentful-space the entry store and invalidations (env PP_POSTGRES_URL, or --postgres-file; an argument holding a password is readable by every local user: a warning is printed).")
    var postgres: String?

    @Option(help: ArgumentHelp("A file holding the PostgreSQL URL (a trailing newline is ignored).", valueName: "path"))
    var postgresFile: String?

    @Option(help: "With --postgres: how long a replica's claim on shared-outbox events lasts, in ms; after a replica died the others deliver its events once it passed (env PP_OUTBOX_LEASE_MS).")
    var outboxLeaseMs: Int = Int(environment["PP_OUTBOX_LEASE_MS"] ?? "") ?? 30_000

    @Option(help: ArgumentHelp(
        "A key signing visitor-state cookies and replay tickets: base64 of at least 32 bytes (openssl rand -base64 32). Repeat to rotate: the first signs, all verify. Prefer env PP_VISITOR_STATE_KEYS (comma-separated) or --visitor-state-key-file: an argument is readable by every local user (a warning is printed). Without one, a random per-process key.",
        valueName: "base64"))
    var visitorStateKey: [String] = []

    @Option(help: ArgumentHelp("A file holding the visitor-state keys, one per line, the signing one first.", valueName: "path"))
    var visitorStateKeyFile: String?

    @Option(help: "How long a /first page's replay ticket may be committed, in ms (env PP_REPLAY_TICKET_LIFETIME_MS).")
    var replayTicketLifetimeMs: Int = Int(environment["PP_REPLAY_TICKET_LIFETIME_MS"] ?? "") ?? 600_000

    @Option(help: ArgumentHelp(
        "A bearer token OpenFeature clients present to POST /ofrep/v1/evaluate/flags[/{key}] (repeatable). Prefer env PP_OFREP_TOKENS (comma-separated) or --ofrep-token-file: an argument is readable by every local user (a warning is printed). Without a token or an API key the OFREP routes are not mounted.",
        valueName: "token"))
    var ofrepToken: [String] = []

    @Option(help: ArgumentHelp("A file holding the OFREP bearer tokens, one per line.", valueName: "path"))
    var ofrepTokenFile: String?

    @Option(help: ArgumentHelp("An X-API-Key OpenFeature clients may present to the OFREP routes instead (repeatable). Prefer env PP_OFREP_API_KEYS (comma-separated) or --ofrep-api-key-file (a warning is printed).", valueName: "key"))
    var ofrepApiKey: [String] = []

    @Option(help: ArgumentHelp("A file holding the OFREP API keys, one per line.", valueName: "path"))
    var ofrepApiKeyFile: String?

    @Flag(help: "OFREP targeting keys are profile ids trusted as they are, not the app's sealed targeting tokens: only when every OFREP credential holder is one of your own servers (env PP_OFREP_TRUSTS_PROFILE_IDS=1).")
    var ofrepTrustsProfileIds = false

    @Flag(help: "Cookies without Secure, for plain-HTTP development (env PP_INSECURE_COOKIES=1).")
    var insecureCookies = false

    @Flag(help: "Send nothing before the visitor consents, not even the page view (env PP_STRICT_CONSENT=1).")
    var strictConsent = false

    @Option(help: "How long a connection of either listener may make no progress (no complete request head or body chunk read, no response finished) before it is closed, in ms: connections holding half a request (slowloris) and idle keep-alive ones (env PP_IDLE_TIMEOUT_MS).")
    var idleTimeoutMs: Int = Int(environment["PP_IDLE_TIMEOUT_MS"] ?? "") ?? 30_000

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (env LOG_LEVEL).")
    var logLevel: String = environment["LOG_LEVEL"] ?? "info"

    /// Every secret from its argument, file or environment variable, with the warnings for those
    /// given as arguments (``SecretSource``'s contract).
    /// - Throws: `ValidationError` when a secret is given both as an argument and as a file, or a
    ///   file cannot be read or holds no value.
    func secrets(environment: [String: String] = Self.environment) throws -> CommandSecrets {
        let keys = try CommandSecrets.visitorStateKeys.resolve(arguments: visitorStateKey, file: visitorStateKeyFile, environment: environment)
        let tokens = try CommandSecrets.ofrepTokens.resolve(arguments: ofrepToken, file: ofrepTokenFile, environment: environment)
        let apiKeys = try CommandSecrets.ofrepAPIKeys.resolve(arguments: ofrepApiKey, file: ofrepApiKeyFile, environment: environment)
        let webhook = try CommandSecrets.webhookSecret.resolve(
            arguments: contentfulWebhookSecret.map { [$0] } ?? [], file: contentfulWebhookSecretFile, environment: environment)
        var postgresURL = try CommandSecrets.postgresURL.resolve(arguments: postgres.map { [$0] } ?? [], file: postgresFile, environment: environment)
        if let url = postgresURL.values.first, !CommandSecrets.hasPassword(url) { postgresURL.warning = nil }
        let accessToken = try CommandSecrets.contentfulAccessToken.resolve(arguments: [], file: contentfulAccessTokenFile, environment: environment)
        return CommandSecrets(
            visitorStateKeys: keys.values, ofrepTokens: tokens.values, ofrepAPIKeys: apiKeys.values,
            webhookSecret: webhook.values.first, postgresURL: postgresURL.values.first, contentfulAccessToken: accessToken.values.first,
            warnings: [keys, tokens, apiKeys, webhook, postgresURL].compactMap(\.warning))
    }

    func validate() throws {
        let secrets = try secrets()
        if !secrets.visitorStateKeys.isEmpty {
            do {
                _ = try VisitorStateKeys(base64Encoded: secrets.visitorStateKeys)
            } catch {
                throw ValidationError("the visitor-state keys: \(error)")
            }
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        if let metricsPort = metricsPort ?? Int(Self.environment["PP_METRICS_PORT"] ?? ""), !(0...65535).contains(metricsPort) { throw ValidationError("--metrics-port must be 0...65535") }
        if let engines = engines ?? Int(Self.environment["PP_ENGINES"] ?? ""), engines < 1 { throw ValidationError("--engines must be at least 1") }
        guard outboxLeaseMs >= 100 else { throw ValidationError("--outbox-lease-ms must be at least 100") }
        guard replayTicketLifetimeMs >= 1000 else { throw ValidationError("--replay-ticket-lifetime-ms must be at least 1000") }
        guard experienceTimeoutMs > 0 else { throw ValidationError("--experience-timeout-ms must be positive") }
        guard idleTimeoutMs >= 100 else { throw ValidationError("--idle-timeout-ms must be at least 100") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        if contentfulSpace != nil, secrets.contentfulAccessToken == nil {
            throw ValidationError("--contentful-space needs the environment variable CONTENTFUL_ACCESS_TOKEN or --contentful-access-token-file")
        }
        if let secret = secrets.webhookSecret {
            guard secret.utf16.count == 64 else { throw ValidationError("the webhook signing secret must be exactly 64 characters") }
            if insecureWebhook { throw ValidationError("give either a webhook signing secret or --insecure-webhook, not both") }
        }
    }

    /// The app's configuration from the flags, the environment and `secrets`.
    func appConfiguration(secrets: CommandSecrets) -> AppConfiguration {
        AppConfiguration(
            host: host, port: port, metricsHost: metricsHost, metricsPort: metricsPort ?? Int(Self.environment["PP_METRICS_PORT"] ?? ""), clientId: clientId, environment: environment,
            experienceBaseURL: experienceBaseURL ?? Self.environment["PP_EXPERIENCE_BASE_URL"],
            insightsBaseURL: insightsBaseURL ?? Self.environment["PP_INSIGHTS_BASE_URL"],
            engines: engines ?? Int(Self.environment["PP_ENGINES"] ?? ""),
            experienceTimeout: .milliseconds(experienceTimeoutMs),
            fixturesDirectory: URL(fileURLWithPath: fixtures, isDirectory: true),
            contentful: contentfulSpace.map {
                ContentfulSettings(spaceId: $0, environment: contentfulEnvironment,
                                   accessToken: secrets.contentfulAccessToken ?? "", baseURL: contentfulBaseURL,
                                   webhook: secrets.webhookSecret.map { .signed(secret: $0) } ?? (insecureWebhook ? .unsigned : nil))
            },
            postgresURL: secrets.postgresURL,
            sharedOutboxLease: .milliseconds(outboxLeaseMs),
            visitorStateKeys: secrets.visitorStateKeys,
            secureCookies: !(insecureCookies || Self.environment["PP_INSECURE_COOKIES"] == "1"),
            replayTicketLifetime: .milliseconds(replayTicketLifetimeMs),
            ofrepCredentials: secrets.ofrepTokens.map { .bearerToken($0) } + secrets.ofrepAPIKeys.map { .apiKey($0) },
            ofrepTrustsProfileIds: ofrepTrustsProfileIds || Self.environment["PP_OFREP_TRUSTS_PROFILE_IDS"] == "1",
            strictConsent: strictConsent || Self.environment["PP_STRICT_CONSENT"] == "1",
            idleTimeout: .milliseconds(idleTimeoutMs))
    }

    func run() async throws {
        let secrets = try secrets()
        for warning in secrets.warnings {
            try? FileHandle.standardError.write(contentsOf: Data("personalized-pages: \(warning)\n".utf8))
        }
        var logger = Logger(label: "personalized-pages", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let configuration = appConfiguration(secrets: secrets)
        // OpenTelemetry export (OTLP/HTTP), on when OTEL_EXPORTER_OTLP_ENDPOINT is set: tracing is
        // bootstrapped before the app creates its service, which traces with the global tracer.
        let telemetry: AppTelemetry?
        do {
            telemetry = try OTLPExport.bootstrap(environment: Self.environment, logger: logger)
        } catch {
            throw ValidationError("OpenTelemetry export (OTEL_* environment): \(error)")
        }
        logger.notice("\(OTLPExport.summary(environment: Self.environment))")
        // The process's metrics backend: GET /metrics of the metrics listener serves this registry
        // (and, with OTLP export on, the same metrics are exported).
        let registry = PrometheusCollectorRegistry()
        let prometheus = PrometheusMetricsFactory(registry: registry)
        MetricsSystem.bootstrap(telemetry?.metricsFactory.map { MultiplexMetricsHandler(factories: [prometheus, $0]) } ?? prometheus)
        let app: PersonalizedPagesApp
        do {
            app = try PersonalizedPagesApp(configuration: configuration, metricsRegistry: registry, telemetry: telemetry, logger: logger)
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
