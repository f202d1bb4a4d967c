import OptimizationTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import JavaScriptHost
@testable import OptimizationDelivery
import Synchronization

/// An in-memory ``OutboxFileSystem`` for one directory that models what a power loss keeps, and
/// injects faults.
///
/// **Model.** Every file is an inode with its *current* content (what a reader sees: the page
/// cache) and its *durable* content (what was there at its last `fsync`). The directory maps names
/// to inodes twice: the current mapping and the durable one (as of the last directory `fsync`);
/// creations, renames and unlinks since then are kept in order as pending directory operations
/// (a journaling file system commits metadata in order, so a crash keeps a prefix of them).
/// `sync(_:path:)` makes a file's content durable; `syncDirectory(_:)` makes every name durable.
///
/// **Recording.** With `recording`, every mutation (create, write, fsync, directory fsync,
/// rename, truncate, unlink) is one trace step, and the whole model is snapshotted after it, so
/// ``crashStates(afterStep:)`` can build every disk a crash at that point could leave.
///
/// **Faults.** ``failNextSyncs``, ``failNextDirectorySyncs`` (fail with `EIO`) and
/// ``writeLimits`` (each write call writes at most the next limit's bytes; 0 makes `write` return
/// 0) are consumed in order.
///
/// Thread-safe (one lock); handles are opaque numbers starting at 1,000.
final class FaultInjectingFileSystem: OutboxFileSystem {
    /// One file's content as a reader sees it and as it is on the disk.
    struct Inode: Sendable, Hashable {
        var content: [UInt8] = []
        var durable: [UInt8] = []
    }

    /// A name change not yet made durable by a directory `fsync`.
    enum DirectoryOperation: Sendable, Hashable {
        case link(name: String, inode: Int)
        case unlink(name: String)
        case rename(from: String, to: String)

        func apply(to names: inout [String: Int]) {
            switch self {
            case .link(let name, let inode): names[name] = inode
            case .unlink(let name): names[name] = nil
            case .rename(let from, let to):
                names[to] = names[from]
                names[from] = nil
            }
        }
    }

    /// What the file system looked like after one trace step.
    struct Snapshot: Sendable {
        var inodes: [Int: Inode]
        var names: [String: Int]
        var durableNames: [String: Int]
        var pending: [DirectoryOperation]
        /// The most recent write whose file was not `fsync`ed since: inode and byte range.
        var lastUnsyncedWrite: (inode: Int, start: Int, end: Int)?
        /// The clock's time after the step.
        var time: Double
    }

    /// One disk a crash can leave: file name → bytes.
    struct CrashState: Sendable, Hashable {
        enum Kind: String, Sendable {
            /// The process died, the machine did not: everything written is there.
            case processCrash
            /// Power loss: only what the model says may have reached the disk.
            case powerLoss
        }

        var kind: Kind
        var label: String
        var files: [String: [UInt8]]
    }

    /// A trace step: what happened (for failure messages).
    struct Step: Sendable {
        var description: String
    }

    private struct Model: Sendable {
        var inodes: [Int: Inode] = [:]
        var names: [String: Int] = [:]
        var durableNames: [String: Int] = [:]
        var pending: [DirectoryOperation] = []
        var handles: [Int32: Int] = [:]
        var nextInode = 1
        var nextHandle: Int32 = 1_000
        var unsynced: [Int: (start: Int, end: Int, order: Int)] = [:]
        var order = 0
        var recording = false
        var steps: [Step] = []
        var snapshots: [Snapshot] = []
        var failNextSyncs = 0
        var failNextDirectorySyncs = 0
        var writeLimits: [Int] = []
        var writeCalls = 0
        var fileSyncs = 0
        var directorySyncs = 0
    }

    let directory: String
    private let clock: (any HostClock)?
    private let model = Mutex(Model())

    /// - Parameters:
    ///   - directory: the one directory this file system holds (paths are `directory/name`).
    ///   - files: initial files, durable (content and names).
    ///   - clock: stamps snapshots with the time of each step.
    init(directory: String = "/outbox", files: [String: [UInt8]] = [:], clock: (any HostClock)? = nil) {
        self.directory = directory
        self.clock = clock
        model.withLock { model in
            for (name, bytes) in files {
                let inode = model.nextInode
                model.nextInode += 1
                model.inodes[inode] = Inode(content: bytes, durable: bytes)
                model.names[name] = inode
                model.durableNames[name] = inode
            }
        }
    }

    // MARK: Controls and inspection

    /// Starts recording trace steps and snapshots (a snapshot of the state now is step 0).
    func startRecording() {
        let time = clock?.now() ?? 0
        model.withLock { model in
            model.recording = true
            model.steps = [Step(description: "start")]
            model.snapshots = [Self.snapshot(of: model, time: time)]
        }
    }

    /// Number of trace steps recorded (step 0 is the state when recording started).
    var stepCount: Int { model.withLock { $0.snapshots.count } }

    func step(_ index: Int) -> Step { model.withLock { $0.steps[index] } }

    /// How many recorded steps start with `prefix` (e.g. "rename", "unlink", "fsync directory").
    func stepCount(startingWith prefix: String) -> Int {
        model.withLock { $0.steps.filter { $0.description.hasPrefix(prefix) }.count }
    }

    var failNextSyncs: Int {
        get { model.withLock { $0.failNextSyncs } }
        set { model.withLock { $0.failNextSyncs = newValue } }
    }

    var failNextDirectorySyncs: Int {
        get { model.withLock { $0.failNextDirectorySyncs } }
        set { model.withLock { $0.failNextDirectorySyncs = newValue } }
    }

    /// Limits of the next write calls, in order (0: the call writes nothing and returns 0).
    var writeLimits: [Int] {
        get { model.withLock { $0.writeLimits } }
        set { model.withLock { $0.writeLimits = newValue } }
    }

    /// Write calls so far, and successful file / directory `fsync`s.
    var writeCalls: Int { model.withLock { $0.writeCalls } }
    var fileSyncs: Int { model.withLock { $0.fileSyncs } }
    var directorySyncs: Int { model.withLock { $0.directorySyncs } }

    /// Current files (what a reader sees).
    var currentFiles: [String: [UInt8]] {
        model.withLock { model in model.names.mapValues { model.inodes[$0]!.content } }
    }

    /// What a power loss now leaves when nothing unsynced reached the disk.
    var durableFiles: [String: [UInt8]] {
        model.withLock { model in model.durableNames.mapValues { model.inodes[$0]!.durable } }
    }

    /// Names whose creation, rename or removal is not durable yet.
    var pendingDirectoryOperations: [DirectoryOperation] { model.withLock { $0.pending } }

    /// The disk after a power loss in which the first `count` pending directory operations (in
    /// order) reached the disk, with every file's durable content.
    func durableFiles(applyingPending count: Int) -> [String: [UInt8]] {
        model.withLock { model in
            var names = model.durableNames
            for operation in model.pending.prefix(count) { operation.apply(to: &names) }
            return names.mapValues { model.inodes[$0]!.durable }
        }
    }

    /// Every disk a crash right after trace step `index` can leave (duplicates removed):
    /// - process crash: the current names and contents;
    /// - power loss: (a) durable names and contents; (c) the current disk with the last unsynced
    ///   write torn after 1 byte, half of it, all but one byte; (d) the durable names plus each
    ///   prefix of the pending directory operations, with durable or with current contents; and
    ///   the current names with durable contents (metadata journaled, data not written back).
    func crashStates(afterStep index: Int) -> [CrashState] {
        let snapshot = model.withLock { $0.snapshots[index] }
        func files(_ names: [String: Int], durable: Bool, torn: (inode: Int, length: Int)? = nil) -> [String: [UInt8]] {
            names.mapValues { inode in
                let node = snapshot.inodes[inode]!
                if let torn, torn.inode == inode { return Array(node.content.prefix(torn.length)) }
                return durable ? node.durable : node.content
            }
        }
        var states: [CrashState] = []
        var seen: Set<[String: [UInt8]]> = []
        func add(_ kind: CrashState.Kind, _ label: String, _ disk: [String: [UInt8]]) {
            if seen.insert(disk).inserted || kind == .processCrash {
                states.append(CrashState(kind: kind, label: label, files: disk))
            }
        }
        add(.processCrash, "process crash", files(snapshot.names, durable: false))
        add(.powerLoss, "synced only", files(snapshot.durableNames, durable: true))
        if let write = snapshot.lastUnsyncedWrite {
            let count = write.end - write.start
            for cut in Set([1, count / 2, count - 1]) where cut > 0 && cut < count {
                add(.powerLoss, "last write torn after \(cut) of \(count) bytes",
                    files(snapshot.names, durable: false, torn: (write.inode, write.start + cut)))
            }
        }
        var names = snapshot.durableNames
        for (applied, operation) in ([nil] + snapshot.pending.map(Optional.some)).enumerated() {
            if let operation { operation.apply(to: &names) }
            if applied < snapshot.pending.count {
                add(.powerLoss, "\(applied) of \(snapshot.pending.count) name changes durable, written data",
                    files(names, durable: false))
                if applied > 0 {
                    add(.powerLoss, "\(applied) of \(snapshot.pending.count) name changes durable, synced data",
                        files(names, durable: true))
                }
            }
        }
        add(.powerLoss, "names durable, synced data", files(snapshot.names, durable: true))
        return states
    }

    /// The time of the clock after trace step `index`.
    func time(afterStep index: Int) -> Double {
        model.withLock { $0.snapshots[index].time }
    }

    // MARK: OutboxFileSystem

    func makePrivateDirectory(_ path: String) throws(OutboxError) {
        guard path == directory else { throw .cannotOpen(path: path, errno: ENOENT) }
    }

    func lockFile(_ path: String, directory: String) throws(OutboxError) -> Int32 {
        let name = try self.name(path)
        return mutate("lock \(name)") { model in
            let inode = model.names[name] ?? Self.link(name, in: &model)
            return Self.open(inode, in: &model)
        }
    }

    func createForAppend(_ path: String, header: [UInt8]) throws(OutboxError) -> Int32 {
        let name = try self.name(path)
        let handle = try mutate("create \(name)") { (model) throws(OutboxError) -> Int32 in
            guard model.names[name] == nil else { throw .ioFailure(path: path, operation: "create", errno: EEXIST) }
            return Self.open(Self.link(name, in: &model), in: &model)
        }
        do {
            try write(header, to: handle, path: path)
        } catch {
            close(handle)
            try? remove(path)
            throw error
        }
        return handle
    }

    func openForAppend(_ path: String) throws(OutboxError) -> Int32 {
        let name = try self.name(path)
        return try model.withLock { (model) throws(OutboxError) -> Int32 in
            guard let inode = model.names[name] else { throw .ioFailure(path: path, operation: "open", errno: ENOENT) }
            return Self.open(inode, in: &model)
        }
    }

    func writeOnce(_ bytes: UnsafeRawBufferPointer, to handle: Int32, path: String) throws(OutboxError) -> Int {
        let chunk = Array(bytes)
        return try mutate("write \(chunk.count) bytes to \(lastComponent(path))") { (model) throws(OutboxError) -> Int in
            model.writeCalls += 1
            guard let inode = model.handles[handle] else { throw .ioFailure(path: path, operation: "write", errno: EBADF) }
            var count = chunk.count
            if !model.writeLimits.isEmpty { count = min(count, model.writeLimits.removeFirst()) }
            let start = model.inodes[inode]!.content.count
            model.inodes[inode]!.content += chunk.prefix(count)
            if count > 0 {
                model.order += 1
                model.unsynced[inode] = (start: start, end: start + count, order: model.order)
            }
            return count
        }
    }

    func sync(_ handle: Int32, path: String) throws(OutboxError) {
        try mutate("fsync \(lastComponent(path))") { (model) throws(OutboxError) in
            guard let inode = model.handles[handle] else { throw .ioFailure(path: path, operation: "fsync", errno: EBADF) }
            if model.failNextSyncs > 0 {
                model.failNextSyncs -= 1
                throw .ioFailure(path: path, operation: "fsync", errno: EIO)
            }
            model.inodes[inode]!.durable = model.inodes[inode]!.content
            model.unsynced[inode] = nil
            model.fileSyncs += 1
        }
    }

    func syncDirectory(_ path: String) throws(OutboxError) {
        guard path == directory else { throw .ioFailure(path: path, operation: "open directory", errno: ENOENT) }
        try mutate("fsync directory") { (model) throws(OutboxError) in
            if model.failNextDirectorySyncs > 0 {
                model.failNextDirectorySyncs -= 1
                throw .ioFailure(path: path, operation: "fsync", errno: EIO)
            }
            model.durableNames = model.names
            model.pending = []
            model.directorySyncs += 1
        }
    }

    func truncate(_ handle: Int32, to length: Int) -> Bool {
        mutate("truncate to \(length)") { model in
            guard let inode = model.handles[handle], length <= model.inodes[inode]!.content.count else { return false }
            model.inodes[inode]!.content.removeSubrange(length...)
            model.unsynced[inode] = nil
            return true
        }
    }

    func readAll(_ path: String) throws(OutboxError) -> [UInt8] {
        let name = try self.name(path)
        return try model.withLock { (model) throws(OutboxError) -> [UInt8] in
            guard let inode = model.names[name] else { throw .ioFailure(path: path, operation: "open", errno: ENOENT) }
            return model.inodes[inode]!.content
        }
    }

    func replace(_ path: String, with bytes: [UInt8]) throws(OutboxError) {
        let temporary = path + ".tmp"
        try remove(temporary)
        let handle = mutate("create \(lastComponent(temporary))") { model in
            Self.open(Self.link(lastComponent(temporary), in: &model), in: &model)
        }
        do {
            try write(bytes, to: handle, path: temporary)
            try sync(handle, path: temporary)
        } catch {
            close(handle)
            try? remove(temporary)
            throw error
        }
        close(handle)
        let from = lastComponent(temporary)
        let to = lastComponent(path)
        mutate("rename \(from) to \(to)") { model in
            model.names[to] = model.names[from]
            model.names[from] = nil
            model.pending.append(.rename(from: from, to: to))
        }
    }

    func remove(_ path: String) throws(OutboxError) {
        let name = try self.name(path)
        guard model.withLock({ $0.names[name] != nil }) else { return }
        mutate("unlink \(name)") { model in
            model.names[name] = nil
            model.pending.append(.unlink(name: name))
        }
    }

    func list(_ directory: String) throws(OutboxError) -> [String] {
        guard directory == self.directory else { throw .cannotOpen(path: directory, errno: ENOENT) }
        return model.withLock { $0.names.keys.sorted() }
    }

    func size(_ handle: Int32) -> Int {
        model.withLock { model in model.handles[handle].map { model.inodes[$0]!.content.count } ?? 0 }
    }

    func duplicate(_ handle: Int32) -> Int32? {
        model.withLock { model in model.handles[handle].map { Self.open($0, in: &model) } }
    }

    func unlockFile(_ handle: Int32) {
        close(handle)
    }

    func close(_ handle: Int32) {
        model.withLock { _ = $0.handles.removeValue(forKey: handle) }
    }

    // MARK: Internals

    private func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    private func name(_ path: String) throws(OutboxError) -> String {
        guard path.hasPrefix(directory + "/") else { throw .ioFailure(path: path, operation: "open", errno: ENOENT) }
        return String(path.dropFirst(directory.count + 1))
    }

    private static func link(_ name: String, in model: inout Model) -> Int {
        let inode = model.nextInode
        model.nextInode += 1
        model.inodes[inode] = Inode()
        model.names[name] = inode
        model.pending.append(.link(name: name, inode: inode))
        return inode
    }

    private static func open(_ inode: Int, in model: inout Model) -> Int32 {
        let handle = model.nextHandle
        model.nextHandle += 1
        model.handles[handle] = inode
        return handle
    }

    private static func snapshot(of model: Model, time: Double) -> Snapshot {
        let last = model.unsynced.max { $0.value.order < $1.value.order }
        return Snapshot(
            inodes: model.inodes, names: model.names, durableNames: model.durableNames, pending: model.pending,
            lastUnsyncedWrite: last.map { (inode: $0.key, start: $0.value.start, end: $0.value.end) }, time: time)
    }

    /// Runs one mutation under the lock and, when recording, snapshots the model after it
    /// (also after a mutation that failed: its effects so far are part of the trace).
    private func mutate<T>(_ description: String, _ body: (inout Model) throws(OutboxError) -> T) throws(OutboxError) -> T {
        let time = clock?.now() ?? 0
        return try model.withLock { (model) throws(OutboxError) -> T in
            defer {
                if model.recording {
                    model.steps.append(Step(description: description))
                    model.snapshots.append(Self.snapshot(of: model, time: time))
                }
            }
            return try body(&model)
        }
    }

    private func mutate<T>(_ description: String, _ body: (inout Model) -> T) -> T {
        let time = clock?.now() ?? 0
        return model.withLock { model -> T in
            defer {
                if model.recording {
                    model.steps.append(Step(description: description))
                    model.snapshots.append(Self.snapshot(of: model, time: time))
                }
            }
            return body(&model)
        }
    }
}
