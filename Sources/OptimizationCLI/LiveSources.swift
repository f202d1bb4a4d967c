import Foundation
import HostPlatform
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
    /// The optimization tenant under API v1 (under v2 the space is).
    var clientId: String?
    var apiVersion: OptimizationAPIVersion
    /// The environment of the optimization APIs: `--environment` when given, else the version's default.
    var optimizationEnvironment: String?
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
        case .invalidConfiguration, .badRequest, .invalidEntryId:
            return .usage("\(error)")
        case .invalidResponse, .ambiguousMatch:
            return CLIFailure(message: "\(error)", exitCode: 69)
        case .rateLimited, .serverError, .unexpectedStatus, .transport, .deadlineExceeded:
            return CLIFailure(message: "\(error)", exitCode: 69)
        }
    }

    /// One `page` call of a one-engine `OptimizationService` with `preflight`: the visitor's
    /// current selections, evaluated without being stored, on the routes of `apiVersion` (v2:
    /// the space is the tenant; v1: `--client-id` is).
    private func selections(profileId: String) async throws(CLIFailure) -> SelectedOptimizations {
        let tenant: String
        switch apiVersion {
        case .v2: tenant = space
        case .v1:
            guard let clientId, !clientId.isEmpty else { throw .usage("--profile with --api-version v1 needs --client-id") }
            tenant = clientId
        }
        var api = OptimizationAPIConfig()
        if let experienceBaseURL { api.experienceBaseURL = experienceBaseURL }
        let service = OptimizationService(
            config: OptimizationConfig(
                clientId: tenant, environment: optimizationEnvironment, apiVersion: apiVersion, locale: locale, channel: "server", api: api),
            options: .init(engines: 1, experienceTimeout: .milliseconds(timeoutMilliseconds)),
            environment: .init(logger: Self.logger))
        do {
            try await service.start(timeout: .milliseconds(timeoutMilliseconds))
        } catch {
            throw .usage("\(error)")
        }
        let request = service.forRequest(RequestOptions(consent: true, profileId: profileId, preflight: true))
        let outcome: EventOutcome
        do {
            outcome = try await request.page().outcome
        } catch {
            await service.shutdown()
            throw CLIFailure(message: "Experience API call failed: \(error)", exitCode: 69)
        }
        await service.shutdown()
        switch outcome {
        case .delivered:
            guard let selected = request.selectedOptimizations else {
                throw CLIFailure(message: "Experience API answered without selections", exitCode: 69)
            }
            return selected
        case .refused(let status, _, _) where status == 401 || status == 403:
            throw CLIFailure(message: "Experience API refused the profile: \(outcome)", exitCode: 77)
        default:
            throw CLIFailure(message: "Experience API: \(outcome)", exitCode: 69)
        }
    }
}
