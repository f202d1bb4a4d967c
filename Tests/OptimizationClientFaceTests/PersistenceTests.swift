import Foundation
import JavaScriptHost
import Logging
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import OptimizationTesting
import Testing

/// persistence scenarios that apply on Linux,
/// each against a real temporary directory; "restart" = a new client on the same directory.
@Suite("Persistence of consent and profile continuity")
struct PersistenceTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("persistence-\(UUID().uuidString)")
    static let profile: JSONValue = ["id": "a19c3f54d2b84e37a93f6d1c0e5b7284", "stableId": "a19c3f54d2b84e37a93f6d1c0e5b7284"]
    static let changes: JSONValue = [["key": "hero.title", "type": "Variable", "value": "Hi",
                                      "meta": ["experienceId": "e1", "variantIndex": 1]]]
    static let selections: JSONValue = [["experienceId": "e1", "variantIndex": 1, "variants": [:], "sticky": false]]

    func client(_ defaults: StorageDefaults? = nil, logger: Logger = Logger(label: "t")) throws -> OptimizationClient {
        let client = OptimizationClient(environment: .init(logger: logger, clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .directory(directory)))
        try client.initialize(config: OptimizationConfig(clientId: "persist", defaults: defaults))
        return client
    }

    var onDisk: PersistedState { FileOptimizationStore(directory: directory, logger: Logger(label: "t")).load() }

    func seed(_ state: PersistedState) {
        FileOptimizationStore(directory: directory, logger: Logger(label: "t")).save(state)
    }

    @Test func consentSurvivesARestart() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try client()
        #expect(first.state.consent == nil)
        first.consent(true)
        #expect(onDisk.consent == true && onDisk.persistenceConsent == true)
        first.destroy()
        let second = try client()
        #expect(second.state.consent == true && second.state.persistenceConsent == true)
        #expect(second.hasConsent("track"))
    }

    @Test func continuityIsRestoredOnlyWithPersistenceConsent() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try client(StorageDefaults(consent: true, persistenceConsent: true, profile: Self.profile,
                                               changes: Self.changes, selectedOptimizations: Self.selections))
        // The anonymous id follows the profile id.
        #expect(onDisk.anonymousId == "a19c3f54d2b84e37a93f6d1c0e5b7284")
        #expect(onDisk.profile == Self.profile && onDisk.changes == Self.changes && onDisk.selectedOptimizations == Self.selections)
        // destroy() keeps everything on disk.
        first.destroy()
        #expect(onDisk.profile == Self.profile && onDisk.consent == true)
        // A restart restores the profile through the defaults.
        let second = try client()
        #expect(second.state.profile?["id"] == Self.profile["id"])
        #expect(second.state.selectedOptimizations == Self.selections)
    }

    @Test func anonymousIdIsKeptWhenALaterProfileHasNoId() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try client(StorageDefaults(consent: true, persistenceConsent: true, profile: Self.profile)).destroy()
        _ = try client(StorageDefaults(profile: ["traits": [:]]))
        #expect(onDisk.anonymousId == "a19c3f54d2b84e37a93f6d1c0e5b7284")
    }

    @Test func configuredDefaultsWinOverPersistedValues() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        seed(PersistedState(consent: true, persistenceConsent: true, profile: Self.profile, changes: Self.changes,
                            selectedOptimizations: Self.selections, anonymousId: "a19c"))
        // A configured consent false ⇒ persistence false, nothing loaded, continuity erased.
        let client = try client(StorageDefaults(consent: false))
        #expect(client.state.consent == false && client.state.persistenceConsent == false)
        #expect(client.state.profile == nil && client.state.selectedOptimizations == nil)
        #expect(onDisk == PersistedState(consent: false, persistenceConsent: false))
    }

    @Test func persistedValuesAreUsedWhenNothingIsConfigured() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        seed(PersistedState(consent: true, persistenceConsent: true, profile: Self.profile, changes: Self.changes,
                            selectedOptimizations: Self.selections, anonymousId: "a19c"))
        let client = try client()
        #expect(client.state.consent == true && client.state.profile == Self.profile)
        #expect(client.state.changes == Self.changes && client.state.selectedOptimizations == Self.selections)
    }

    @Test func deniedPersistenceConsentPurgesStaleContinuityAtStartup() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        seed(PersistedState(consent: true, persistenceConsent: false, profile: Self.profile, anonymousId: "a19c"))
        let client = try client()
        #expect(client.state.profile == nil)
        #expect(onDisk == PersistedState(consent: true, persistenceConsent: false))
    }

    @Test func eventConsentAloneDoesNotImplyPersistenceConsent() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // No inference of persistence consent from event consent.
        seed(PersistedState(consent: true, profile: Self.profile, anonymousId: "a19c"))
        let client = try client()
        #expect(client.state.consent == true && client.state.persistenceConsent == nil)
        #expect(client.state.profile == nil)
        client.consent(events: true)
        client.destroy()
        #expect(onDisk.consent == true && onDisk.persistenceConsent == nil)
    }

    @Test func withdrawingConsentErasesContinuityButKeepsTheChoice() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = try client(StorageDefaults(consent: true, persistenceConsent: true, profile: Self.profile))
        #expect(onDisk.profile != nil)
        client.consent(false)
        #expect(onDisk == PersistedState(consent: false, persistenceConsent: false))
        client.destroy()
        let restarted = try self.client()
        #expect(restarted.state.consent == false && !restarted.hasConsent("track"))
    }

    @Test func persistenceOnlyWithdrawalKeepsEventConsent() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = try client(StorageDefaults(consent: true, persistenceConsent: true, profile: Self.profile))
        client.consent(events: true, persistence: false)
        #expect(onDisk == PersistedState(consent: true, persistenceConsent: false))
    }

    @Test(arguments: ["{broken", "", "\u{0}\u{1}", "[]"])
    func corruptStoreFilesDoNotStopStartup(_ content: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for file in ["consent.json", "profile-continuity.json"] {
            try Data(content.utf8).write(to: directory.appendingPathComponent(file))
        }
        let logs = LogRecorder()
        let client = try client(logger: logs.logger)
        #expect(client.isInitialized && client.state.consent == nil)
        #expect(logs.all.contains { $0.message.contains("ignoring") })
        client.consent(true)
        #expect(onDisk.consent == true)
    }

    @Test func disabledStorageWritesNothing() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
        try client.initialize(config: OptimizationConfig(clientId: "persist"))
        client.consent(true)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test func stateChangesAreObservableBeforeTheCallReturns() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = try client()
        let changes = client.stateChanges
        client.consent(true)
        var iterator = changes.makeAsyncIterator()
        // The element was yielded synchronously inside consent(true): no waiting involved.
        let next = await iterator.next()
        #expect(next?.consent == true)
        client.destroy()
        #expect(await iterator.next() == nil)
    }
}
