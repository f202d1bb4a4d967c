import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import OptimizationTesting
import Testing

/// Model-based randomized test of the consent gate and the event pipeline.
///
/// A plain Swift model of the rules (gating, the allow-list, one blocked report per distinct call, de-duplication) predicts for
/// every call whether it is accepted or blocked, how many events it emits, and what the queues
/// hold. The engine must agree on every call; every accepted event must carry
/// `context.gdpr.isConsentGiven` equal to the consent when it was built; every blocked call must
/// be reported exactly once; nothing queued may survive `consent(false)`.
///
/// Reproducible: the seed is printed with every failure; set `CONSENT_MODEL_SEED=<seed>` to
/// replay it (and `CONSENT_MODEL_SEQUENCES=<n>` to change the number of sequences).
@Suite("Consent model (randomized)")
struct ConsentModelTests {
    static let sequenceCount = ProcessInfo.processInfo.environment["CONSENT_MODEL_SEQUENCES"].flatMap(Int.init) ?? 10_000

    /// Allow-list configurations; one client each, reused across sequences.
    static let allowLists: [[String]?] = [
        nil,
        [],
        ["component"],
        ["component_click"],
        ["flag"],
        ["identify", "page", "track"],
        ["component", "component_click", "flag"],
        ["screen", "page", "component", "component_hover"],
    ]

    /// Sequences between two re-initializations of one client (with random defaults, so the
    /// undecided consent state is exercised too).
    static let reinitializeEvery = 250

    @Test func engineAgreesWithTheModelOnRandomSequences() async throws {
        let seed = ProcessInfo.processInfo.environment["CONSENT_MODEL_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        var random = ConsentModelRandom(seed: seed)
        let started = Date()
        var harnesses: [ConsentModelHarness] = []
        for allowList in Self.allowLists {
            harnesses.append(try await ConsentModelHarness(allowList: allowList, defaults: StorageDefaults()))
        }
        var calls = 0
        var sequencesRun = 0
        var failures: [String] = []
        sequences: for sequence in 0..<Self.sequenceCount {
            sequencesRun += 1
            let index = Int.random(in: 0..<harnesses.count, using: &random)
            let harness = harnesses[index]
            harness.sequencesRun += 1
            if harness.sequencesRun % Self.reinitializeEvery == 0 {
                let defaults = StorageDefaults(
                    consent: random.optionalBool(), persistenceConsent: random.optionalBool(),
                    profile: Bool.random(using: &random) ? ["id": "p-model"] : nil)
                try harness.reinitialize(defaults: defaults)
            } else {
                // Reset consent between sequences: withdraw (purges), then maybe grant again.
                harness.apply(.consentAll(false))
                switch Int.random(in: 0..<3, using: &random) {
                case 0: harness.apply(.consentAll(true))
                case 1: harness.apply(.consentPartial(events: random.optionalBool(), persistence: random.optionalBool()))
                default: break
                }
            }
            var log = ["sequence \(sequence) on allow-list \(harness.allowListDescription), start \(harness.model)"]
            var problems = await harness.checkState(after: "sequence start")
            let length = Int.random(in: 5...8, using: &random)
            for _ in 0..<length where problems.isEmpty {
                calls += 1
                let operation = ConsentModelOperation.random(using: &random, marker: calls)
                log.append("  \(operation)")
                problems += await harness.run(operation)
                let method = ["identify", "page", "screen", "track", "trackView", "trackClick", "trackFlagView", "trackHover", "alias"]
                    .randomElement(using: &random)!
                if harness.client.hasConsent(method) != harness.model.allows(method) {
                    problems.append("hasConsent(\(method)) = \(!harness.model.allows(method)), model says \(harness.model.allows(method))")
                }
            }
            if !problems.isEmpty {
                failures.append((log + problems.map { "  ✗ \($0)" }).joined(separator: "\n"))
                break sequences
            }
        }
        // Nothing stray may be left on the streams once every client is destroyed.
        for harness in harnesses {
            harness.client.destroy()
            let stray = await harness.probe.newEvents().count + (await harness.probe.newBlocked()).count
            if stray != 0 { failures.append("\(stray) unexpected stream elements on \(harness.allowListDescription)") }
        }
        let seconds = Date().timeIntervalSince(started)
        print("consent model: \(sequencesRun) of \(Self.sequenceCount) sequences, \(calls) event calls, seed \(seed), \(String(format: "%.1f", seconds)) s")
        for failure in failures {
            Issue.record("consent model failed (seed \(seed); replay with CONSENT_MODEL_SEED=\(seed)):\n\(failure)")
        }
    }
}

// MARK: - The model

/// The rules, in plain Swift.
struct ConsentRuleModel: CustomStringConvertible {
    static let defaultAllowList = ["identify", "screen"]
    static let optimizationTypes: Set<String> = ["identify", "page", "screen", "track", "group", "alias", "component"]

    let allowList: [String]
    var consent: Bool?
    var persistence: Bool?
    var experienceQueue = 0
    var insightsQueue = 0
    var hasScreenKey = false
    var screenKey: String?
    var stickyKeys: Set<String> = []

    init(allowList: [String]?, defaults: StorageDefaults) {
        self.allowList = allowList ?? Self.defaultAllowList
        consent = defaults.consent
        persistence = defaults.persistenceConsent ?? defaults.consent
    }

    func allows(_ method: String) -> Bool {
        if consent == true { return true }
        switch method {
        case "trackView": return allowList.contains("component")
        case "trackFlagView": return allowList.contains("flag") || allowList.contains("component")
        case "trackClick": return allowList.contains("component_click")
        case "trackHover": return allowList.contains("component_hover")
        default: return allowList.contains(method)
        }
    }

    var optimizationPossible: Bool {
        consent == true || !Self.optimizationTypes.isDisjoint(with: allowList)
    }

    mutating func setConsent(events: Bool?, persistence: Bool?) {
        if let events { consent = events }
        if let persistence { self.persistence = persistence }
        if events == false {
            experienceQueue = 0
            insightsQueue = 0
        }
    }

    /// What a call must produce; applies its effect on the model.
    mutating func predict(_ operation: ConsentModelOperation) -> ConsentPrediction {
        switch operation {
        case .consentAll, .consentPartial:
            return ConsentPrediction(accepted: nil, eventTypes: [], blockedMethod: nil)
        case .identify, .page, .screen, .track:
            let method = operation.method
            guard allows(method) else { return .blocked(method) }
            experienceQueue += 1
            return ConsentPrediction(accepted: true, eventTypes: [method], blockedMethod: nil)
        case .trackCurrentScreen(let name, let routeKey, _):
            guard allows("screen") else { return .blocked("trackCurrentScreen") }
            let key = routeKey ?? name
            if hasScreenKey && screenKey == key { return ConsentPrediction(accepted: false, eventTypes: [], blockedMethod: nil) }
            hasScreenKey = true
            screenKey = key
            experienceQueue += 1
            return ConsentPrediction(accepted: true, eventTypes: ["screen"], blockedMethod: nil)
        case .trackView(let viewId, let sticky, let stickyKey, _, _):
            guard allows("trackView") else { return .blocked("trackView") }
            let key = stickyKey ?? viewId
            insightsQueue += 1
            if sticky == true && !stickyKeys.contains(key) {
                stickyKeys.insert(key)
                experienceQueue += 1
                return ConsentPrediction(accepted: true, eventTypes: ["component", "component"], blockedMethod: nil)
            }
            return ConsentPrediction(accepted: true, eventTypes: ["component"], blockedMethod: nil)
        case .trackClick:
            guard allows("trackClick") else { return .blocked("trackClick") }
            insightsQueue += 1
            return ConsentPrediction(accepted: true, eventTypes: ["component_click"], blockedMethod: nil)
        }
    }

    var description: String {
        "{consent \(consent.map(String.init) ?? "unset"), persistence \(persistence.map(String.init) ?? "unset"), queues \(experienceQueue)/\(insightsQueue)}"
    }
}

struct ConsentPrediction {
    var accepted: Bool?
    var eventTypes: [String]
    var blockedMethod: String?

    static func blocked(_ method: String) -> ConsentPrediction {
        ConsentPrediction(accepted: false, eventTypes: [], blockedMethod: method)
    }
}

enum ConsentModelOperation: CustomStringConvertible {
    case consentAll(Bool)
    case consentPartial(events: Bool?, persistence: Bool?)
    case identify(marker: Int)
    case page(marker: Int)
    case screen(marker: Int)
    case track(marker: Int)
    case trackCurrentScreen(name: String, routeKey: String?, marker: Int)
    case trackView(viewId: String, sticky: Bool?, stickyKey: String?, contextId: String?, marker: Int)
    case trackClick(marker: Int)

    var method: String {
        switch self {
        case .consentAll, .consentPartial: return "consent"
        case .identify: return "identify"
        case .page: return "page"
        case .screen: return "screen"
        case .track: return "track"
        case .trackCurrentScreen: return "trackCurrentScreen"
        case .trackView: return "trackView"
        case .trackClick: return "trackClick"
        }
    }

    var marker: Int? {
        switch self {
        case .consentAll, .consentPartial: return nil
        case .identify(let m), .page(let m), .screen(let m), .track(let m), .trackClick(let m): return m
        case .trackCurrentScreen(_, _, let m): return m
        case .trackView(_, _, _, _, let m): return m
        }
    }

    static func random(using random: inout ConsentModelRandom, marker: Int) -> ConsentModelOperation {
        switch Int.random(in: 0..<12, using: &random) {
        case 0: return .consentAll(Bool.random(using: &random))
        case 1: return .consentPartial(events: random.optionalBool(), persistence: random.optionalBool())
        case 2: return .identify(marker: marker)
        case 3: return .page(marker: marker)
        case 4: return .screen(marker: marker)
        case 5: return .track(marker: marker)
        case 6, 7:
            return .trackCurrentScreen(
                name: ["Home", "Details"].randomElement(using: &random)!,
                routeKey: [nil, "home", "details/1"].randomElement(using: &random)!, marker: marker)
        case 8, 9:
            return .trackView(
                viewId: ["view-a", "view-b", "view-\(marker)"].randomElement(using: &random)!,
                sticky: [nil, true, false].randomElement(using: &random)!,
                stickyKey: [nil, "entry-1", "entry-2"].randomElement(using: &random)!,
                contextId: [nil, "ctx-unknown"].randomElement(using: &random)!, marker: marker)
        default: return .trackClick(marker: marker)
        }
    }

    var description: String {
        switch self {
        case .consentAll(let accept): return "consent(\(accept))"
        case .consentPartial(let events, let persistence):
            return "consent(events: \(events.map(String.init) ?? "nil"), persistence: \(persistence.map(String.init) ?? "nil"))"
        case .identify(let m): return "identify #\(m)"
        case .page(let m): return "page #\(m)"
        case .screen(let m): return "screen #\(m)"
        case .track(let m): return "track #\(m)"
        case .trackCurrentScreen(let name, let routeKey, let m): return "trackCurrentScreen(\(name), routeKey: \(routeKey ?? "nil")) #\(m)"
        case .trackView(let viewId, let sticky, let key, let context, let m):
            return "trackView(\(viewId), sticky: \(sticky.map(String.init) ?? "nil"), key: \(key ?? "nil"), context: \(context ?? "nil")) #\(m)"
        case .trackClick(let m): return "trackClick #\(m)"
        }
    }
}

// MARK: - Driving the engine

/// One client per allow-list configuration, its model and its stream probe.
final class ConsentModelHarness: @unchecked Sendable {
    let allowList: [String]?
    let client: OptimizationClient
    var model: ConsentRuleModel
    var probe: EventProbe
    var sequencesRun = 0

    var allowListDescription: String { allowList.map { "\($0)" } ?? "nil (default)" }

    init(allowList: [String]?, defaults: StorageDefaults) async throws {
        self.allowList = allowList
        client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
        try client.initialize(config: OptimizationConfig(clientId: "model", allowedEventTypes: allowList, defaults: defaults))
        model = ConsentRuleModel(allowList: allowList, defaults: defaults)
        probe = EventProbe(client)
    }

    func reinitialize(defaults: StorageDefaults) throws {
        try client.initialize(config: OptimizationConfig(clientId: "model", allowedEventTypes: allowList, defaults: defaults))
        model = ConsentRuleModel(allowList: allowList, defaults: defaults)
    }

    /// Applies a consent operation to the engine and the model.
    func apply(_ operation: ConsentModelOperation) {
        switch operation {
        case .consentAll(let accept):
            client.consent(accept)
            model.setConsent(events: accept, persistence: accept)
        case .consentPartial(let events, let persistence):
            client.consent(events: events, persistence: persistence)
            model.setConsent(events: events, persistence: persistence)
        default:
            break
        }
    }

    /// Consent, persistence consent, optimizationPossible and queue sizes agree with the model.
    func checkState(after what: String) async -> [String] {
        var problems: [String] = []
        let state = client.state
        if state.consent != model.consent || state.persistenceConsent != model.persistence {
            problems.append("after \(what): state consent \(String(describing: state.consent))/\(String(describing: state.persistenceConsent)), model \(model)")
        }
        if state.optimizationPossible != model.optimizationPossible {
            problems.append("after \(what): optimizationPossible \(state.optimizationPossible), model \(model.optimizationPossible)")
        }
        if let sizes = client.queueSizes() {
            if sizes.experience != model.experienceQueue || sizes.insights != model.insightsQueue {
                problems.append("after \(what): queues \(sizes.experience)/\(sizes.insights), model \(model.experienceQueue)/\(model.insightsQueue)")
            }
        } else {
            problems.append("after \(what): queue sizes unavailable")
        }
        // Drained after the reset operations of a sequence start; they emit nothing.
        let stray = await probe.newEvents().count + (await probe.newBlocked()).count
        if stray != 0 { problems.append("after \(what): \(stray) unexpected stream elements") }
        return problems
    }

    /// Runs one operation and compares everything observable with the model's prediction.
    func run(_ operation: ConsentModelOperation) async -> [String] {
        let consentAtBuild = model.consent
        let prediction = model.predict(operation)
        var problems: [String] = []
        let result: EventResult?
        do {
            result = try await call(operation)
        } catch {
            return ["\(operation) threw \(error)"]
        }
        if operation.marker == nil {
            apply(operation)
            return await checkState(after: "\(operation)")
        }
        if result?.accepted != prediction.accepted {
            problems.append("\(operation): accepted \(String(describing: result?.accepted)), model \(String(describing: prediction.accepted))")
        }
        let events = await probe.newEvents()
        if events.map({ $0["type"]?.stringValue ?? "?" }) != prediction.eventTypes {
            problems.append("\(operation): emitted \(events.map { $0["type"]?.stringValue ?? "?" }), model \(prediction.eventTypes)")
        }
        for event in events {
            let given = event["context"]?["gdpr"]?["isConsentGiven"]?.boolValue
            if given != (consentAtBuild == true) {
                problems.append("\(operation): isConsentGiven \(String(describing: given)) but consent was \(String(describing: consentAtBuild))")
            }
            if !Self.carriesMarker(event, of: operation) {
                problems.append("\(operation): event does not belong to this call: \(event)")
            }
        }
        let blocked = await probe.newBlocked()
        if blocked.map(\.method) != (prediction.blockedMethod.map { [$0] } ?? []) {
            problems.append("\(operation): blocked reports \(blocked.map(\.method)), model \(String(describing: prediction.blockedMethod))")
        }
        for report in blocked where report.reason != "consent" || report.args.count != 1 || !Self.payloadCarriesMarker(report.args[0], of: operation) {
            problems.append("\(operation): malformed blocked report \(report)")
        }
        if let sizes = client.queueSizes(), sizes.experience != model.experienceQueue || sizes.insights != model.insightsQueue {
            problems.append("\(operation): queues \(sizes.experience)/\(sizes.insights), model \(model.experienceQueue)/\(model.insightsQueue)")
        }
        return problems
    }

    private func call(_ operation: ConsentModelOperation) async throws -> EventResult? {
        switch operation {
        case .consentAll, .consentPartial:
            return nil
        case .identify(let m):
            return try await client.identify(userId: "u\(m)", traits: ["marker": .number(JSONNumber(m))])
        case .page(let m):
            return try await client.page(["properties": ["marker": .number(JSONNumber(m))]])
        case .screen(let m):
            return try await client.screen(name: "Screen", properties: ["marker": .number(JSONNumber(m))])
        case .track(let m):
            return try await client.track(event: "e\(m)")
        case .trackCurrentScreen(let name, let routeKey, let m):
            return try await client.trackCurrentScreen(name: name, properties: ["marker": .number(JSONNumber(m))], routeKey: routeKey)
        case .trackView(let viewId, let sticky, let stickyKey, let contextId, let m):
            return try await client.trackView(TrackViewPayload(
                componentId: "c\(m)", viewId: viewId, optimizationContextId: contextId, variantIndex: m % 3,
                viewDuration: .milliseconds(2000), sticky: sticky, stickyTrackingKey: stickyKey))
        case .trackClick(let m):
            return try await client.trackClick(TrackClickPayload(componentId: "c\(m)", variantIndex: m % 2))
        }
    }

    /// Every emitted event names the call that produced it.
    private static func carriesMarker(_ event: JSONValue, of operation: ConsentModelOperation) -> Bool {
        guard let m = operation.marker else { return false }
        switch operation {
        case .identify: return event["userId"]?.stringValue == "u\(m)" && event["traits"]?["marker"]?.intValue == m
        case .page, .screen, .trackCurrentScreen: return event["properties"]?["marker"]?.intValue == m
        case .track: return event["event"]?.stringValue == "e\(m)"
        case .trackView, .trackClick: return event["componentId"]?.stringValue == "c\(m)" && event["optimization"] == nil
        case .consentAll, .consentPartial: return false
        }
    }

    private static func payloadCarriesMarker(_ payload: JSONValue, of operation: ConsentModelOperation) -> Bool {
        guard let m = operation.marker else { return false }
        switch operation {
        case .identify: return payload["userId"]?.stringValue == "u\(m)"
        case .page: return payload["properties"]?["marker"]?.intValue == m
        case .screen, .trackCurrentScreen: return payload["properties"]?["marker"]?.intValue == m
        case .track: return payload["event"]?.stringValue == "e\(m)"
        case .trackView, .trackClick: return payload["componentId"]?.stringValue == "c\(m)"
        case .consentAll, .consentPartial: return false
        }
    }
}


extension SeededRandomNumberGenerator {
    mutating func optionalBool() -> Bool? {
        [nil, true, false].randomElement(using: &self)!
    }
}
