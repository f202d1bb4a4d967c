import OptimizationServiceFace
import CoreMetrics
import Crypto
import Foundation
import Synchronization
import HostPlatform
import Logging
import OptimizationJSON
import OptimizationEngine
import OrderedCollections
import Tracing

/// Serves Contentful custom flags (the `Variable` changes of a profile's Experience answer) over
/// the OpenFeature Remote Evaluation Protocol, so any OpenFeature client, in any language, reads
/// them from this service.
///
/// Routes (framework-neutral: ``respond(to:)`` takes an ``OFREPRequest`` from any server):
/// - `POST /ofrep/v1/evaluate/flags/{key}` with `{"context": {"targetingKey": <targeting key>,
///   "consent"?: Bool, "locale"?: String}}` → `200 {key, value, reason, variant, metadata}`;
///   `400 {key, errorCode, errorDetails}` (`PARSE_ERROR`, `TARGETING_KEY_MISSING`,
///   `INVALID_CONTEXT`); `404 {key, errorCode: FLAG_NOT_FOUND}`; `429` with `Retry-After` when the
///   Experience API reports the profile overloaded (`ERR_PROFILE_OVERLOAD`); `500
///   {errorDetails}` when it failed otherwise.
/// - `POST /ofrep/v1/evaluate/flags` → `200 {flags: [...]}` with an `ETag` (every flag of the
///   profile); `304` when `If-None-Match` names that ETag; errors as above without `key`.
/// - A request must carry exactly one credential field, `Authorization: Bearer …` or
///   `X-API-Key`, holding one of the configured credentials; otherwise (none, a wrong one, or
///   several fields, however many of them are right) it gets `401`, nothing is evaluated, and
///   the refusal is counted (``unauthorizedCount``, swift-metrics counter
///   `optimization_ofrep_unauthorized_total`). Another method than `POST` gets `405`.
///
/// **Targeting keys.** With ``OFREPConfiguration/TargetingKeys/sealedTokens(_:)`` the key is an
/// ``OFREPTargetingToken`` the application sealed for its visitor; a bare or forged key is
/// `400 INVALID_CONTEXT`. With ``OFREPConfiguration/TargetingKeys/profileIds`` the key is a
/// profile id trusted as it is (server-side callers only). A profile id is 1–256 of
/// `A–Z a–z 0–9 . _ : -` and not only dots.
///
/// Values are read by the shared core as `OptimizationRequest/getFlag(_:)` reads them.
/// `reason` is `TARGETING_MATCH` for a value of a selected variant (variant index ≥ 1) and
/// `DEFAULT` for a baseline value (index 0); `variant` is `baseline` or `variant-<index>`;
/// `metadata` holds `experienceId` and `variantIndex`.
///
/// **Evaluation and consent.** A profile is evaluated by one `page` call of the service, within
/// the service's Experience budget, and its flags are kept for
/// ``OFREPConfiguration/cacheTimeToLive`` (concurrent requests for one profile, consent and
/// locale share one call; an answer given under one consent is never served under another).
/// The call is a preflight (the Experience API stores nothing) unless the context says
/// `consent: true` and ``OFREPConfiguration/storesConsentedEvaluations`` is set. The call carries
/// the context's consent, so it passes the service's consent gate like any other event: when the
/// service's allow-list does not admit `page` before consent, an unconsented visitor gets
/// `400 INVALID_CONTEXT` and nothing leaves the process.
///
/// **Telemetry.** Every flag a response names (one per single-flag request, each of a bulk
/// answer) and every single-flag request that fails to evaluate records an OpenTelemetry
/// `feature_flag.evaluation` event on the task's current span (the service's tracer, as
/// `OptimizationRequest/getFlag(_:)` does) and counts on `optimization_flag_evaluations_total`:
/// reason `targeting_match` / `default` as above, `cached` when the profile's answer came from
/// the cache, `error` with `error.type` the OFREP error code in lower case. The targeting key is
/// never recorded.
///
/// **Threading.** Every method is safe from any task. Logs carry no profile id or flag value
/// above debug level.
public final class OFREPEvaluator: Sendable {
    /// The single-flag path without its key.
    public static let flagPathPrefix = "/ofrep/v1/evaluate/flags/"
    /// The bulk path.
    public static let bulkPath = "/ofrep/v1/evaluate/flags"
    /// The longest targeting key (profile id) accepted, in bytes.
    public static let maximumTargetingKeyLength = 256

    /// The service whose Experience calls evaluate profiles and whose engines read flags.
    public let service: OptimizationService
    /// The configuration it was created with.
    public let configuration: OFREPConfiguration

    /// SHA-256 digests of the accepted credentials (compared in constant time).
    private let bearerTokens: [[UInt8]]
    private let apiKeys: [[UInt8]]
    private let cache: OFREPAnswerCache
    private let logger: Logger
    private let unauthorized: Atomic<Int>
    private let unauthorizedCounter: Counter
    private let flagEvaluations: FeatureFlagTelemetry

    /// Creates an evaluator for `service` (which must be started before requests arrive).
    /// - Parameters:
    ///   - service: evaluates profiles and reads flags.
    ///   - configuration: credentials, cache and evaluation policy.
    ///   - logger: receives diagnostics; default the service's logger.
    ///   - metricsFactory: receives `optimization_ofrep_unauthorized_total` and
    ///     `optimization_flag_evaluations_total`; nil (the default) uses `MetricsSystem.factory`.
    /// - Throws: ``OFREPConfigurationError`` without a credential, with a credential shorter than
    ///   ``OFREPConfiguration/minimumCredentialLength`` bytes, or with a bound that is not positive.
    public init(
        service: OptimizationService, configuration: OFREPConfiguration, logger: Logger? = nil, metricsFactory: (any MetricsFactory)? = nil
    ) throws(OFREPConfigurationError) {
        var bearerTokens: [[UInt8]] = []
        var apiKeys: [[UInt8]] = []
        for credential in configuration.credentials {
            switch credential {
            case .bearerToken(let token):
                guard !token.isEmpty else { throw .missingCredentials }
                guard token.utf8.count >= OFREPConfiguration.minimumCredentialLength else { throw .weakCredential("bearer token") }
                bearerTokens.append(Self.digest(token))
            case .apiKey(let key):
                guard !key.isEmpty else { throw .missingCredentials }
                guard key.utf8.count >= OFREPConfiguration.minimumCredentialLength else { throw .weakCredential("API key") }
                apiKeys.append(Self.digest(key))
            }
        }
        guard !bearerTokens.isEmpty || !apiKeys.isEmpty else { throw .missingCredentials }
        guard configuration.cacheCapacity > 0 else { throw .invalidBound("cacheCapacity") }
        guard configuration.maximumBodyBytes > 0 else { throw .invalidBound("maximumBodyBytes") }
        guard configuration.cacheTimeToLive > .zero else { throw .invalidBound("cacheTimeToLive") }
        self.service = service
        self.configuration = configuration
        self.bearerTokens = bearerTokens
        self.apiKeys = apiKeys
        self.cache = OFREPAnswerCache(
            clock: service.environment.clock, timeToLive: configuration.cacheTimeToLive, capacity: configuration.cacheCapacity)
        self.logger = logger ?? service.environment.logger
        self.unauthorized = Atomic(0)
        self.unauthorizedCounter = Counter(label: "optimization_ofrep_unauthorized_total", factory: metricsFactory ?? MetricsSystem.factory)
        self.flagEvaluations = FeatureFlagTelemetry(tracer: service.tracer, metricsFactory: metricsFactory ?? MetricsSystem.factory)
    }

    /// How many requests this evaluator refused with 401.
    public var unauthorizedCount: Int {
        unauthorized.load(ordering: .relaxed)
    }

    /// Answers a request on an OFREP path; nil when the path is not one (the caller serves it).
    public func respond(to request: OFREPRequest) async -> OFREPResponse? {
        if request.path == Self.bulkPath || request.path == Self.bulkPath + "/" {
            return await evaluateFlags(request)
        }
        guard request.path.hasPrefix(Self.flagPathPrefix) else { return nil }
        let rawKey = request.path.dropFirst(Self.flagPathPrefix.count)
        guard !rawKey.isEmpty, !rawKey.contains("/"), let key = String(rawKey).removingPercentEncoding, !key.isEmpty else { return nil }
        return await evaluateFlag(key: key, request)
    }

    /// `POST /ofrep/v1/evaluate/flags/{key}`: one flag of the context's profile.
    public func evaluateFlag(key: String, _ request: OFREPRequest) async -> OFREPResponse {
        if let refusal = refusal(of: request) { return refusal }
        let context: OFREPContext
        switch OFREPContext.read(request, maximumBytes: configuration.maximumBodyBytes, targetingKeys: configuration.targetingKeys) {
        case .success(let read): context = read
        case .failure(let failure):
            recordFailure(key: key, code: failure.code)
            return Self.json(400, ["key": .string(key), "errorCode": .string(failure.code.rawValue), "errorDetails": .string(failure.details)])
        }
        switch await answer(for: context) {
        case .failure(let failure):
            recordFailure(key: key, code: failure.errorCode)
            return response(for: failure, key: key)
        case .success(let answer):
            guard let flag = flag(key, in: answer, profileId: context.profileId) else {
                recordFailure(key: key, code: .flagNotFound)
                return Self.json(404, ["key": .string(key), "errorCode": .string(OFREPErrorCode.flagNotFound.rawValue), "errorDetails": "the profile has no flag with this key"])
            }
            return Self.json(200, flag)
        }
    }

    /// `POST /ofrep/v1/evaluate/flags`: every flag of the context's profile, with an `ETag`.
    public func evaluateFlags(_ request: OFREPRequest) async -> OFREPResponse {
        if let refusal = refusal(of: request) { return refusal }
        let context: OFREPContext
        switch OFREPContext.read(request, maximumBytes: configuration.maximumBodyBytes, targetingKeys: configuration.targetingKeys) {
        case .success(let read): context = read
        case .failure(let failure): return Self.json(400, ["errorCode": .string(failure.code.rawValue), "errorDetails": .string(failure.details)])
        }
        switch await answer(for: context) {
        case .failure(let failure):
            return response(for: failure, key: nil)
        case .success(let answer):
            var flags: [JSONValue] = []
            var seen = Set<String>()
            for change in answer.changes where change["type"]?.stringValue == "Variable" {
                guard let key = change["key"]?.stringValue, seen.insert(key).inserted,
                      let flag = flag(key, in: answer, profileId: context.profileId) else { continue }
                flags.append(.object(flag))
            }
            var response = Self.json(200, ["flags": .array(flags)])
            guard response.status == 200 else { return response }
            let tag = Self.entityTag(of: response.body)
            response.headers["ETag"] = tag
            if Self.matches(request.values(forHeader: "If-None-Match"), tag) {
                return OFREPResponse(status: 304, headers: ["ETag": tag])
            }
            return response
        }
    }

    // MARK: Authentication

    /// 405 for another method than POST; 401 (counted) unless the request carries exactly one
    /// credential field and it holds an accepted credential; nil to go on.
    private func refusal(of request: OFREPRequest) -> OFREPResponse? {
        guard request.method.caseInsensitiveEquals("POST") else { return OFREPResponse(status: 405, headers: ["Allow": "POST"]) }
        if let accepted = presentedCredential(of: request), accepted { return nil }
        unauthorized.add(1, ordering: .relaxed)
        unauthorizedCounter.increment()
        return OFREPResponse(status: 401, headers: ["WWW-Authenticate": "Bearer"])
    }

    /// Whether the request's one credential field holds an accepted credential; nil when it
    /// carries no credential field or more than one (a request may not guess several at once).
    private func presentedCredential(of request: OFREPRequest) -> Bool? {
        let authorizations = request.values(forHeader: "Authorization")
        let keys = request.values(forHeader: "X-API-Key")
        guard authorizations.count + keys.count == 1 else { return nil }
        if let value = authorizations.first {
            let parts = value.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, String(parts[0]).caseInsensitiveEquals("Bearer") else { return false }
            let presented = Self.digest(parts[1].trimmingCharacters(in: .whitespaces))
            return bearerTokens.contains { Self.constantTimeEquals($0, presented) }
        }
        let presented = Self.digest(keys[0])
        return apiKeys.contains { Self.constantTimeEquals($0, presented) }
    }

    private static func digest(_ text: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(text.utf8)))
    }

    /// Equal digests, in a time that does not depend on where they differ.
    private static func constantTimeEquals(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    // MARK: Evaluation

    private func answer(for context: OFREPContext) async -> Result<OFREPAnswerCache.Answer, OFREPEvaluationFailure> {
        // Consent is part of the key: an answer evaluated under consent must not be served to a
        // request whose consent the service's gate would refuse.
        let consent = context.consent.map { $0 ? "1" : "0" } ?? "-"
        let key = context.profileId + "\u{1F}" + consent + "\u{1F}" + (context.locale ?? "")
        return await cache.answer(for: key) { [self] in await evaluate(context) }
    }

    /// One `page` call for the context's visitor; preflight unless a consented visitor's
    /// evaluations are configured to be stored.
    private func evaluate(_ context: OFREPContext) async -> Result<OFREPAnswerCache.Answer, OFREPEvaluationFailure> {
        let stores = context.consent == true && configuration.storesConsentedEvaluations
        let request = service.forRequest(RequestOptions(
            consent: RequestConsent(events: context.consent, persistence: context.consent),
            profileId: context.profileId, locale: context.locale, preflight: !stores))
        let result: EventResult
        do {
            result = try await request.page()
        } catch {
            logger.warning("OFREP evaluation failed", metadata: ["error": "\(error)"])
            return .failure(.general("the service could not evaluate the profile"))
        }
        switch result.outcome {
        case .delivered:
            return .success(.init(selectedOptimizations: request.selectedOptimizations, changes: request.changes ?? []))
        case .blocked:
            return .failure(.consentRefused)
        case .failed(429, "ERR_PROFILE_OVERLOAD", _):
            return .failure(.overloaded)
        case .accepted, .refused, .timedOut, .circuitOpen, .failed:
            logger.warning("OFREP evaluation failed at the Experience API", metadata: ["outcome": "\(Self.outcomeKind(result.outcome))"])
            return .failure(.general("the Experience API did not evaluate the profile (\(Self.outcomeKind(result.outcome)))"))
        }
    }

    /// The OFREP success object of flag `key`, or nil when the answer has no `Variable` change
    /// with that key.
    private func flag(_ key: String, in answer: OFREPAnswerCache.Answer, profileId: String) -> OrderedDictionary<String, JSONValue>? {
        guard let change = answer.changes.first(where: { $0["type"]?.stringValue == "Variable" && $0["key"]?.stringValue == key }) else {
            return nil
        }
        let value = service.forRequest(RequestOptions(
            profileId: profileId, selectedOptimizations: answer.selectedOptimizations, changes: answer.changes)).flagValue(key)
        let variantIndex = change["meta"]?["variantIndex"]?.numberValue?.intValue ?? 0
        if flagEvaluations.isRecording {
            flagEvaluations.record(FeatureFlagEvaluation(
                key: key, variant: FeatureFlagEvaluation.variantName(index: variantIndex),
                reason: answer.isCached ? .cached : variantIndex > 0 ? .targetingMatch : .default))
        }
        var flag: OrderedDictionary<String, JSONValue> = [
            "key": .string(key), "value": value, "reason": .string(variantIndex > 0 ? "TARGETING_MATCH" : "DEFAULT"),
            "variant": .string(variantIndex > 0 ? "variant-\(variantIndex)" : "baseline"),
        ]
        var metadata: OrderedDictionary<String, JSONValue> = ["variantIndex": .number(JSONNumber(variantIndex))]
        if let experienceId = change["meta"]?["experienceId"]?.stringValue { metadata["experienceId"] = .string(experienceId) }
        flag["metadata"] = .object(metadata)
        return flag
    }

    /// Records a single-flag request that failed as an `error` evaluation of `key`.
    private func recordFailure(key: String, code: OFREPErrorCode) {
        guard flagEvaluations.isRecording else { return }
        flagEvaluations.record(FeatureFlagEvaluation(key: key, reason: .error, errorType: code.rawValue.lowercased()))
    }

    private func response(for failure: OFREPEvaluationFailure, key: String?) -> OFREPResponse {
        var body: OrderedDictionary<String, JSONValue> = key.map { ["key": .string($0)] } ?? [:]
        switch failure {
        case .consentRefused:
            body["errorCode"] = .string(OFREPErrorCode.invalidContext.rawValue)
            body["errorDetails"] = "the visitor's consent does not allow an evaluation"
            return Self.json(400, body)
        case .overloaded:
            let duration = configuration.overloadRetryAfter.components
            let seconds = max(1, duration.seconds + (duration.attoseconds > 0 ? 1 : 0))
            var response = Self.json(429, ["errorDetails": "the profile is overloaded at the Experience API; retry later"])
            response.headers["Retry-After"] = "\(seconds)"
            return response
        case .general(let details):
            return Self.json(500, ["errorDetails": .string(details)])
        }
    }

    // MARK: Encoding

    private static func json(_ status: Int, _ object: OrderedDictionary<String, JSONValue>) -> OFREPResponse {
        guard let text = try? JSONValue.object(object).jsonText() else {
            return OFREPResponse(status: 500, headers: ["Content-Type": "application/json"], body: Array(#"{"errorDetails":"the answer cannot be written as JSON"}"#.utf8))
        }
        return OFREPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(text.utf8))
    }

    /// A strong entity tag of the body: the first 16 bytes of its SHA-256, in hex, quoted.
    static func entityTag(of body: [UInt8]) -> String {
        "\"" + SHA256.hash(data: body).prefix(16).map { String(format: "%02x", $0) }.joined() + "\""
    }

    /// Whether `If-None-Match` values name `tag` (or `*`); weak comparison, as for a GET.
    static func matches(_ values: [String], _ tag: String) -> Bool {
        for value in values {
            for candidate in value.split(separator: ",") {
                var text = candidate.trimmingCharacters(in: .whitespaces)
                if text == "*" { return true }
                if text.hasPrefix("W/") { text.removeFirst(2) }
                if text == tag { return true }
            }
        }
        return false
    }

    private static func outcomeKind(_ outcome: EventOutcome) -> String {
        switch outcome {
        case .accepted: return "accepted"
        case .delivered: return "delivered"
        case .blocked: return "blocked"
        case .refused(let status, _, _): return "refused \(status)"
        case .timedOut: return "timed out"
        case .circuitOpen: return "circuit open"
        case .failed(let status, _, _): return "failed \(status)"
        }
    }
}

/// Why a profile could not be evaluated.
enum OFREPEvaluationFailure: Error, Sendable {
    /// The service's consent gate refused the evaluation call.
    case consentRefused
    /// 429 `ERR_PROFILE_OVERLOAD` after the retries the budget allowed.
    case overloaded
    /// Anything else; the text carries no visitor data.
    case general(String)

    /// The OFREP error code the failure is reported with.
    var errorCode: OFREPErrorCode {
        switch self {
        case .consentRefused: return .invalidContext
        case .overloaded, .general: return .general
        }
    }
}
