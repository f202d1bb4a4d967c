import Foundation
import JavaScriptHost
import Logging
import Optimization

/// What `resolve` fetches live: the entry from the Contentful Delivery API and, optionally, a
/// visitor's selections from the Experience API (a preflight call that stores nothing).
struct LiveSources {
    var space: String
    var environment: String
    var locale: String?
    var preview: Bool
    var cdaBaseURL: String?
    var accessToken: String
    var entryId: String
    var profileId: String?
    var clientId: String?
    var experienceBaseURL: String?
    var timeoutMilliseconds: Int

    static let logger = Logger(label: "optimization-cli", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The access token: `CONTENTFUL_ACCESS_TOKEN`, or the first line of `file`. Never printed.
    static func accessToken(file: String?) throws(CLIFailure) -> String {
        if let file {
            let data = try InputFile.read(file)
            let token = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
                .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard !token.isEmpty else { throw .usage("\(file): no access token in the file") }
            return token
        }
        guard let token = ProcessInfo.processInfo.environment["CONTENTFUL_ACCESS_TOKEN"], !token.isEmpty else {
            throw .usage("live mode needs an access token: set CONTENTFUL_ACCESS_TOKEN or pass --access-token-file")
        }
        return token
    }

    /// The entry, then the selections (nil without `profileId`).
    func fetch() async throws(CLIFailure) -> (ContentfulEntry, SelectedOptimizations?) {
        let source: ContentfulDeliverySource
        do {
            source = try ContentfulDeliverySource(
                configuration: .init(
                    spaceId: space, environment: environment, accessToken: accessToken, api: preview ? .preview : .delivery,
                    baseURL: cdaBaseURL, locale: locale, requestTimeout: .milliseconds(timeoutMilliseconds),
                    fetchDeadline: .milliseconds(timeoutMilliseconds) * 3),
                cachePolicy: .disabled, logger: Self.logger)
        } catch {
            throw .usage("\(error)")
        }
        let entry: ContentfulEntry
        do throws(ContentfulDeliveryError) {
            entry = try await source.entry(id: entryId)
            await source.shutdown()
        } catch {
            await source.shutdown()
            throw Self.failure(for: error)
        }
        guard let profileId else { return (entry, nil) }
        return (entry, try await selections(profileId: profileId))
    }

    /// sysexits codes: unknown entry 66, rejected token 77, unreachable or failing API 69.
    static func failure(for error: ContentfulDeliveryError) -> CLIFailure {
        switch error {
        case .entryNotFound, .notFound, .noMatch:
            return .noInput("\(error)")
        case .unauthorized, .forbidden:
            return CLIFailure(message: "\(error)", exitCode: 77)
        case .invalidConfiguration, .badRequest:
            return .usage("\(error)")
        case .invalidResponse, .ambiguousMatch:
            return CLIFailure(message: "\(error)", exitCode: 69)
        case .rateLimited, .serverError, .unexpectedStatus, .transport, .deadlineExceeded:
            return CLIFailure(message: "\(error)", exitCode: 69)
        }
    }

    /// `POST {experience}v2/organizations/{clientId}/environments/main/profiles/{id}?type=preflight`
    /// with one `page` event: the visitor's current selections, evaluated without being stored.
    private func selections(profileId: String) async throws(CLIFailure) -> SelectedOptimizations {
        guard let clientId, !clientId.isEmpty else { throw .usage("--profile needs --client-id") }
        var base = experienceBaseURL ?? OptimizationAPIConfig.defaultExperienceBaseURL
        if !base.hasSuffix("/") { base += "/" }
        let transport: HTTPFetchTransport
        do {
            transport = try HTTPFetchTransport(
                configuration: .init(allowedBaseURLs: [base], requestTimeout: .milliseconds(timeoutMilliseconds)), logger: Self.logger)
        } catch {
            throw .usage("--experience-base-url: \(error)")
        }
        let encode = { (text: String) in text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? text }
        var url = base + "v2/organizations/\(encode(clientId))/environments/main/profiles/\(encode(profileId))?"
        if let locale { url += "locale=\(encode(locale))&" }
        url += "type=preflight"
        let timestamp = ISO8601DateFormatter().string(from: Date())
        let body = """
            {"events":[{"type":"page","channel":"server","messageId":"\(UUID().uuidString.lowercased())",\
            "timestamp":"\(timestamp)","properties":{},"context":{"library":{"name":"optimization-cli","version":"1"}}}],\
            "options":{"features":["ip-enrichment","location"]}}
            """
        let response: FetchResponse
        do {
            response = try await transport.send(FetchRequest(url: url, method: "POST", headers: ["Content-Type": "application/json"], body: body))
        } catch {
            try? await transport.shutdown()
            throw CLIFailure(message: "Experience API unreachable: \(error)", exitCode: 69)
        }
        try? await transport.shutdown()
        guard (200..<300).contains(response.status) else {
            let code: Int32 = response.status == 401 || response.status == 403 ? 77 : 69
            throw CLIFailure(message: "Experience API answered \(response.status) for the profile", exitCode: code)
        }
        do {
            return try SelectedOptimizations(jsonData: Array(response.body.utf8))
        } catch {
            throw CLIFailure(message: "Experience API response: \(error)", exitCode: 69)
        }
    }
}
