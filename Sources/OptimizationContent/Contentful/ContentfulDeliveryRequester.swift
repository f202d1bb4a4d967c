import OptimizationJSON
import OptimizationTransport
import Foundation
import HostPlatform
import Logging

/// Sends entries-collection queries to the CDA over an `HTTPFetchTransport` (AsyncHTTPClient),
/// with the error policy of a ``ContentfulDeliverySource``:
/// - 401/403/404/400 become typed errors carrying the CDA's `message`, never retried;
/// - 429 waits `X-Contentful-RateLimit-Reset` seconds on the injected clock (at most
///   ``ContentfulDeliveryConfiguration/maximumRateLimitWaits`` times);
/// - 5xx and transport failures are retried up to ``ContentfulDeliveryConfiguration/maximumAttempts``
///   attempts in all, after capped exponential backoff with jitter (no retry storm);
/// - no wait starts that would end after the fetch deadline (clock time since the first attempt).
/// Thread-safe; one instance per source.
struct ContentfulDeliveryRequester: Sendable {
    let configuration: ContentfulDeliveryConfiguration
    let transport: any FetchTransport
    let clock: any HostClock
    let logger: Logger

    /// The 200 body of `query`.
    func fetch(_ query: ContentfulEntryQuery) async throws(ContentfulDeliveryError) -> String {
        let url = self.url(for: query)
        let request = FetchRequest(
            url: url, method: "GET",
            headers: ["Authorization": "Bearer \(configuration.accessToken)", "Accept": "application/json"], body: nil)
        let started = clock.now()
        let deadline = started + configuration.fetchDeadline.inMilliseconds
        var failedAttempts = 0
        var rateLimitWaits = 0
        while true {
            try Task.checkCancellation(orThrow: .transport(.cancelled))
            var failure = ContentfulDeliveryError.transport(.cancelled)
            var wait = 0.0
            do {
                let response = try await transport.send(request)
                switch response.status {
                case 200:
                    return response.body
                case 429:
                    let reset = Int(response.headers["x-contentful-ratelimit-reset"]?.trimmingCharacters(in: .whitespaces) ?? "") ?? 1
                    rateLimitWaits += 1
                    guard rateLimitWaits <= configuration.maximumRateLimitWaits else { throw ContentfulDeliveryError.rateLimited(resetSeconds: reset) }
                    failure = .rateLimited(resetSeconds: reset)
                    wait = Double(max(reset, 0)) * 1000
                    logger.notice("Contentful rate limit; waiting for the reset", metadata: ["resetSeconds": "\(reset)", "query": "\(query)"])
                case 500...599:
                    failure = .serverError(status: response.status, message: Self.message(in: response.body))
                    failedAttempts += 1
                    guard failedAttempts < configuration.maximumAttempts else { throw failure }
                    wait = backoff(afterFailures: failedAttempts)
                default:
                    throw Self.error(status: response.status, body: response.body)
                }
            } catch let error as ContentfulDeliveryError {
                throw error
            } catch let error as HTTPTransportError {
                if error == .cancelled || error == .shutDown { throw .transport(error) }
                failure = .transport(error)
                failedAttempts += 1
                guard failedAttempts < configuration.maximumAttempts else { throw failure }
                wait = backoff(afterFailures: failedAttempts)
            } catch {
                throw .transport(.transportFailure("\(error)"))
            }
            guard clock.now() + wait <= deadline else {
                throw .deadlineExceeded(after: configuration.fetchDeadline, lastFailure: failure.description)
            }
            logger.debug("retrying a Contentful request", metadata: ["query": "\(query)", "waitMs": "\(Int(wait))", "failure": "\(failure)"])
            do {
                try await clock.sleep(milliseconds: wait)
            } catch {
                throw .transport(.cancelled)
            }
        }
    }

    /// Full jitter between half and all of `base · 2^(failures-1)`, capped.
    func backoff(afterFailures failures: Int) -> Double {
        let exponential = configuration.retryBaseDelay.inMilliseconds * pow(2, Double(max(0, failures - 1)))
        let capped = min(exponential, configuration.retryMaximumDelay.inMilliseconds)
        return capped / 2 + Double.random(in: 0...(capped / 2))
    }

    func url(for query: ContentfulEntryQuery) -> String {
        var items = query.queryItems
        items.append(("include", "\(configuration.includeDepth)"))
        if let locale = query.locale ?? configuration.locale { items.append(("locale", locale)) }
        let text = items.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&")
        return "\(configuration.effectiveBaseURL)/spaces/\(Self.encode(configuration.spaceId))/environments/"
            + "\(Self.encode(configuration.environment))/entries?\(text)"
    }

    private static let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~,")

    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// The typed error of a non-retryable status.
    static func error(status: Int, body: String) -> ContentfulDeliveryError {
        let message = message(in: body)
        switch status {
        case 400: return .badRequest(message)
        case 401: return .unauthorized(message)
        case 403: return .forbidden(message)
        case 404: return .notFound(message)
        default: return .unexpectedStatus(status, message)
        }
    }

    /// The CDA error body's `message` (its `sys.id` when there is none), bounded in length.
    static func message(in body: String) -> String {
        let json = try? JSONValue(jsonText: body)
        let text = json?["message"]?.stringValue ?? json?["sys"]?["id"]?.stringValue ?? "no message"
        return text.count > 300 ? String(text.prefix(300)) + "…" : text
    }
}

extension Task where Success == Never, Failure == Never {
    static func checkCancellation(orThrow error: ContentfulDeliveryError) throws(ContentfulDeliveryError) {
        if Task.isCancelled { throw error }
    }
}
