import Foundation
import Logging
import OrderedCollections
import Synchronization
import OptimizationJSON
import OptimizationEngine

/// An `OptimizationStore` in a directory of small JSON files.
///
/// - `consent.json`: `{"consent": "accepted"|"denied", "persistenceConsent": …}`, always written.
/// - `profile-continuity.json`: `{"profile", "changes", "selectedOptimizations", "anonymousId"}`,
///   present only while the saved state has profile continuity; deleted otherwise.
///
/// Files are written atomically (a temporary file in the same directory, then `rename`) with mode
/// 0600 in a directory created with mode 0700. A missing file is simply absent; a corrupt, empty
/// or unreadable one is logged at `warning` (without its content) and treated as absent.
/// Thread-safe.
public final class FileOptimizationStore: OptimizationStore {
    /// The directory holding `consent.json` and `profile-continuity.json`; created on the first save.
    public let directory: URL
    private let logger: Logger
    private let lock = Mutex(())

    static let consentFile = "consent.json"
    static let continuityFile = "profile-continuity.json"

    /// - Parameters:
    ///   - directory: where the files live; created on the first save.
    ///   - logger: receives load/save problems (never visitor data above `debug`).
    public init(directory: URL, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    /// The default directory for a client: `$XDG_STATE_HOME/swift-optimization-linux/<clientId>/<environment>`,
    /// falling back to `~/.local/state/…` when `XDG_STATE_HOME` is unset or not absolute.
    public static func defaultDirectory(clientId: String, environment: String,
                                        environmentVariables: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base: URL
        if let state = environmentVariables["XDG_STATE_HOME"], state.hasPrefix("/") {
            base = URL(fileURLWithPath: state, isDirectory: true)
        } else {
            let home = environmentVariables["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? FileManager.default.homeDirectoryForCurrentUser
            base = home.appendingPathComponent(".local/state", isDirectory: true)
        }
        func safe(_ component: String) -> String {
            let cleaned = component.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" }
            return String(cleaned).isEmpty || component == "." || component == ".." ? "_" : String(cleaned)
        }
        return base.appendingPathComponent("swift-optimization-linux", isDirectory: true)
            .appendingPathComponent(safe(clientId), isDirectory: true)
            .appendingPathComponent(safe(environment), isDirectory: true)
    }

    /// Reads both files. A missing file leaves its fields nil; a corrupt, empty or unreadable one
    /// is logged at `warning` and treated as absent, as is a continuity field of the wrong JSON type.
    public func load() -> PersistedState {
        lock.withLock { _ in
            var state = PersistedState()
            if let consent = readObject(Self.consentFile) {
                state.consent = ConsentEncoding.decode(consent["consent"]?.stringValue)
                state.persistenceConsent = ConsentEncoding.decode(consent["persistenceConsent"]?.stringValue)
            }
            if let continuity = readObject(Self.continuityFile) {
                state.profile = continuity["profile"].flatMap { $0.objectValue != nil ? $0 : nil }
                state.changes = continuity["changes"].flatMap { $0.arrayValue != nil ? $0 : nil }
                state.selectedOptimizations = continuity["selectedOptimizations"].flatMap { $0.arrayValue != nil ? $0 : nil }
                state.anonymousId = continuity["anonymousId"]?.stringValue
            }
            return state
        }
    }

    /// Writes `consent.json`, and `profile-continuity.json` when `state` has profile continuity
    /// (deletes it otherwise), each atomically. A failure is logged at `warning`, never thrown.
    public func save(_ state: PersistedState) {
        lock.withLock { _ in
            do {
                try ensureDirectory()
                var consent = OrderedDictionary<String, JSONValue>()
                if let value = ConsentEncoding.encode(state.consent) { consent["consent"] = .string(value) }
                if let value = ConsentEncoding.encode(state.persistenceConsent) { consent["persistenceConsent"] = .string(value) }
                try writeAtomically(Self.consentFile, .object(consent))
                if state.hasProfileContinuity {
                    var continuity = OrderedDictionary<String, JSONValue>()
                    if let profile = state.profile { continuity["profile"] = profile }
                    if let changes = state.changes { continuity["changes"] = changes }
                    if let selections = state.selectedOptimizations { continuity["selectedOptimizations"] = selections }
                    if let anonymousId = state.anonymousId { continuity["anonymousId"] = .string(anonymousId) }
                    try writeAtomically(Self.continuityFile, .object(continuity))
                } else {
                    try removeIfPresent(Self.continuityFile)
                }
            } catch {
                logger.warning("could not save optimization state", metadata: [
                    "directory": "\(directory.path)", "error": "\(error)",
                ])
            }
        }
    }

    private func readObject(_ name: String) -> JSONValue? {
        let url = directory.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            let data = try Data(contentsOf: url)
            let value = try JSONValue(jsonData: data)
            guard value.objectValue != nil else {
                logger.warning("ignoring optimization state file that is not a JSON object", metadata: ["file": "\(url.path)"])
                return nil
            }
            return value
        } catch let error as JSONError {
            logger.warning("ignoring corrupt optimization state file", metadata: ["file": "\(url.path)", "error": "\(error)"])
        } catch {
            logger.warning("ignoring unreadable optimization state file", metadata: [
                "file": "\(url.path)", "error": "\(error.localizedDescription)",
            ])
        }
        return nil
    }

    private func ensureDirectory() throws {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    private func writeAtomically(_ name: String, _ value: JSONValue) throws {
        let target = directory.appendingPathComponent(name)
        let temporary = directory.appendingPathComponent(".\(name).\(UUID().uuidString).tmp")
        let data = try value.jsonData()
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        guard rename(temporary.path, target.path) == 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: temporary)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }

    private func removeIfPresent(_ name: String) throws {
        let url = directory.appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
    }
}

/// An `OptimizationStore` in memory, for tests and for services that must not write to disk.
public final class InMemoryOptimizationStore: OptimizationStore {
    private let state: Mutex<PersistedState>

    /// Creates a store holding `initial`.
    /// - Parameter initial: the state ``load()`` returns until the first save; default empty.
    public init(_ initial: PersistedState = PersistedState()) {
        state = Mutex(initial)
    }

    /// The last saved state (or the initial one). Thread-safe.
    public func load() -> PersistedState { state.withLock { $0 } }
    /// Replaces the held state with `newState`. Thread-safe.
    public func save(_ newState: PersistedState) { state.withLock { $0 = newState } }
}
