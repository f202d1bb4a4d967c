import Foundation
import Logging
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import OptimizationTesting
import Testing

@Suite("FileOptimizationStore")
struct FileStoreTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)/nested")

    @Test func savesAndLoadsAcrossInstancesWithOwnerOnlyPermissions() throws {
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let state = PersistedState(consent: true, persistenceConsent: true, profile: ["id": "p-1"],
                                   changes: [["key": "k", "type": "Variable", "value": 1]],
                                   selectedOptimizations: [["experienceId": "e", "variantIndex": 1]], anonymousId: "p-1")
        FileOptimizationStore(directory: directory, logger: Logger(label: "t")).save(state)
        #expect(FileOptimizationStore(directory: directory, logger: Logger(label: "t")).load() == state)
        let consentText = try String(contentsOf: directory.appendingPathComponent("consent.json"), encoding: .utf8)
        #expect(consentText == #"{"consent":"accepted","persistenceConsent":"accepted"}"#)
        for file in ["consent.json", "profile-continuity.json"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(file).path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(file)")
        }
        let directoryAttributes = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((directoryAttributes[.posixPermissions] as? Int) == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["consent.json", "profile-continuity.json"])
    }

    @Test func savingWithoutContinuityErasesTheContinuityFile() throws {
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let store = FileOptimizationStore(directory: directory, logger: Logger(label: "t"))
        store.save(PersistedState(consent: true, persistenceConsent: true, profile: ["id": "p"], anonymousId: "p"))
        store.save(PersistedState(consent: false, persistenceConsent: false))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("profile-continuity.json").path))
        #expect(store.load() == PersistedState(consent: false, persistenceConsent: false))
    }

    @Test(arguments: ["{not json", "", "{\"consent\":", "[1,2]", "\u{FF}\u{FE}garbage"])
    func corruptFilesAreLoggedAndTreatedAsAbsent(_ content: String) throws {
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(content.utf8).write(to: directory.appendingPathComponent("consent.json"))
        try Data(content.utf8).write(to: directory.appendingPathComponent("profile-continuity.json"))
        let logs = LogRecorder()
        let store = FileOptimizationStore(directory: directory, logger: logs.logger)
        #expect(store.load() == PersistedState())
        #expect(logs.all.filter { $0.message.contains("ignoring") }.count == 2)
    }

    @Test func unreadableFilesAreLoggedAndTreatedAsAbsent() throws {
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A directory where a file is expected cannot be read as one, even by root.
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("consent.json"), withIntermediateDirectories: true)
        let logs = LogRecorder()
        let store = FileOptimizationStore(directory: directory, logger: logs.logger)
        #expect(store.load() == PersistedState())
        #expect(logs.all.contains { $0.message.contains("unreadable") })
    }

    @Test func defaultDirectoryFollowsXDGStateHome() {
        let xdg = FileOptimizationStore.defaultDirectory(clientId: "client/1", environment: "main",
                                                         environmentVariables: ["XDG_STATE_HOME": "/srv/state", "HOME": "/home/u"])
        #expect(xdg.path == "/srv/state/swift-optimization-linux/client_1/main")
        let home = FileOptimizationStore.defaultDirectory(clientId: "c", environment: "..",
                                                          environmentVariables: ["XDG_STATE_HOME": "relative", "HOME": "/home/u"])
        #expect(home.path == "/home/u/.local/state/swift-optimization-linux/c/_")
    }

    @Test func consentEncoding() {
        #expect(ConsentEncoding.encode(true) == "accepted" && ConsentEncoding.encode(false) == "denied" && ConsentEncoding.encode(nil) == nil)
        #expect(ConsentEncoding.decode("accepted") == true && ConsentEncoding.decode("denied") == false && ConsentEncoding.decode("unknown") == nil)
    }
}
