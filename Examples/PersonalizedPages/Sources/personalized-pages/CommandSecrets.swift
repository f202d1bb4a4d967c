import Foundation

/// Every secret of `personalized-pages`, each from its ``SecretSource`` (an argument, a
/// `--…-file` or the environment), and the warnings to print on stderr at start-up for those
/// given as arguments.
struct CommandSecrets: Equatable, Sendable {
    /// `--visitor-state-key` / `--visitor-state-key-file` / `PP_VISITOR_STATE_KEYS`.
    static let visitorStateKeys = SecretSource(
        flag: "--visitor-state-key", fileFlag: "--visitor-state-key-file", environmentVariable: "PP_VISITOR_STATE_KEYS", isList: true)
    /// `--ofrep-token` / `--ofrep-token-file` / `PP_OFREP_TOKENS`.
    static let ofrepTokens = SecretSource(
        flag: "--ofrep-token", fileFlag: "--ofrep-token-file", environmentVariable: "PP_OFREP_TOKENS", isList: true)
    /// `--ofrep-api-key` / `--ofrep-api-key-file` / `PP_OFREP_API_KEYS`.
    static let ofrepAPIKeys = SecretSource(
        flag: "--ofrep-api-key", fileFlag: "--ofrep-api-key-file", environmentVariable: "PP_OFREP_API_KEYS", isList: true)
    /// `--contentful-webhook-secret` / `--contentful-webhook-secret-file` / `CONTENTFUL_WEBHOOK_SECRET`.
    static let webhookSecret = SecretSource(
        flag: "--contentful-webhook-secret", fileFlag: "--contentful-webhook-secret-file",
        environmentVariable: "CONTENTFUL_WEBHOOK_SECRET", isList: false)
    /// `--postgres` / `--postgres-file` / `PP_POSTGRES_URL`: a connection string, secret when it
    /// holds a password (only then is an argument warned about).
    static let postgresURL = SecretSource(
        flag: "--postgres", fileFlag: "--postgres-file", environmentVariable: "PP_POSTGRES_URL", isList: false)
    /// `--contentful-access-token-file` / `CONTENTFUL_ACCESS_TOKEN` (never an argument).
    static let contentfulAccessToken = SecretSource(
        flag: nil, fileFlag: "--contentful-access-token-file", environmentVariable: "CONTENTFUL_ACCESS_TOKEN", isList: false)

    var visitorStateKeys: [String]
    var ofrepTokens: [String]
    var ofrepAPIKeys: [String]
    var webhookSecret: String?
    var postgresURL: String?
    var contentfulAccessToken: String?
    /// One line per secret given as an argument (see ``SecretSource/warning(flag:fileFlag:environmentVariable:)``).
    var warnings: [String]

    /// True when the connection string `url` carries a password (`user:password@`, or a
    /// `password=` parameter).
    static func hasPassword(_ url: String) -> Bool {
        if let components = URLComponents(string: url), components.password?.isEmpty == false { return true }
        return url.range(of: "password=", options: .caseInsensitive) != nil
    }
}
