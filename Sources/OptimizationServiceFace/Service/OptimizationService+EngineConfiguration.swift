import OptimizationServiceDelivery
import OptimizationVocabulary
import OptimizationDelivery
import CoreMetrics
import Foundation
import JavaScriptHost
import Logging
import OrderedCollections
import Synchronization
import Tracing
import HostPlatform
import OptimizationJSON
import OptimizationContent
import OptimizationTransport
import OptimizationEngine

extension OptimizationService {
    // MARK: Configuration handed to the engines

    /// The configured queue callbacks, plus the Insights circuit gauge.
    var instrumentedQueuePolicy: QueuePolicy {
        var policy = config.queuePolicy ?? QueuePolicy()
        let metrics = self.metrics
        let opened = policy.onCircuitOpen
        let recovered = policy.onFlushRecovered
        policy.onCircuitOpen = { event in
            metrics.circuit("insights", isOpen: true)
            opened?(event)
        }
        policy.onFlushRecovered = { event in
            metrics.circuit("insights", isOpen: false)
            recovered?(event)
        }
        return policy
    }

    /// `__service.configure`: the tenant, the allow-list, the log level and the prepared-document
    /// capacity of every engine, and the default locale (checked there). The flush policy is
    /// Swift's alone (the Experience calls' overload retries and circuit, `ServiceDelivery`).
    var serviceConfiguration: JSONValue {
        let api = config.api ?? OptimizationAPIConfig()
        var apiObject: OrderedDictionary<String, JSONValue> = [
            "experienceBaseUrl": .string(api.effectiveExperienceBaseURL),
            "insightsBaseUrl": .string(api.effectiveInsightsBaseURL),
        ]
        if let features = api.enabledFeatures { apiObject["enabledFeatures"] = .array(features.map(JSONValue.string)) }
        var object = config.tenantMembers
        object.merge([
            "allowedEventTypes": .array((config.allowedEventTypes ?? Self.defaultAllowedEventTypes).map(JSONValue.string)),
            "channel": .string(config.channel),
            "library": ["name": .string(OptimizationLibrary.name), "version": .string(OptimizationLibrary.version)],
            "api": .object(apiObject),
            "requestTimeoutMs": .number(JSONNumber(max(1, options.experienceTimeout.wholeMilliseconds))),
            "logLevel": .string(config.logLevel.rawValue),
            "entryCacheSize": .number(JSONNumber(max(1, config.entryCacheSize))),
        ]) { current, _ in current }
        if let locale = config.locale { object["locale"] = .string(locale) }
        return .object(object)
    }
}
