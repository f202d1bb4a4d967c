#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Every file operation of the outbox (``DurableOutbox``, its storage and its loader): the seam
/// that lets tests replace the disk with a model of what a crash keeps. Paths are absolute file
/// paths inside the outbox's directory; handles are opaque numbers owned by the implementation
/// (for ``PosixOutboxFileSystem``, file descriptors). Every failure is an ``OutboxError``.
///
/// Implementations must be safe to call from any thread; the outbox never uses one handle from
/// two threads at once (it syncs a ``duplicate(_:)`` outside its lock).
package protocol OutboxFileSystem: Sendable {
    /// Creates `path` (and missing parents) with mode 0700; an existing directory is set to 0700.
    /// - Throws: ``OutboxError/cannotOpen(path:errno:)``.
    func makePrivateDirectory(_ path: String) throws(OutboxError)
    /// Opens (creating with mode 0600) `path` and takes an exclusive lock without waiting: one
    /// owner of `directory` across this and every other process.
    /// - Returns: the handle holding the lock; ``unlockFile(_:)`` releases it.
    /// - Throws: ``OutboxError/directoryOwnedInThisProcess(path:)`` or
    ///   ``OutboxError/directoryLocked(path:)`` (with `directory`) when an owner in this or
    ///   another process holds it, ``OutboxError/cannotOpen(path:errno:)``.
    func lockFile(_ path: String, directory: String) throws(OutboxError) -> Int32
    /// Releases the lock taken by ``lockFile(_:directory:)`` and closes its handle.
    func unlockFile(_ handle: Int32)
    /// Creates `path` (mode 0600, must not exist) for appending and writes `header`; on failure
    /// nothing is left behind.
    func createForAppend(_ path: String, header: [UInt8]) throws(OutboxError) -> Int32
    /// Opens an existing file for appending.
    func openForAppend(_ path: String) throws(OutboxError) -> Int32
    /// One write attempt at the end of the file: returns how many bytes it took, which may be
    /// fewer than given, or 0. ``write(_:to:path:)`` loops over it.
    func writeOnce(_ bytes: UnsafeRawBufferPointer, to handle: Int32, path: String) throws(OutboxError) -> Int
    /// Makes the file's content durable (`fsync(2)`).
    func sync(_ handle: Int32, path: String) throws(OutboxError)
    /// Makes the directory's names durable: files created, renamed or removed in it.
    func syncDirectory(_ path: String) throws(OutboxError)
    /// Cuts the file back to `length` bytes (undoing a failed append); false when it failed.
    func truncate(_ handle: Int32, to length: Int) -> Bool
    /// The whole content of `path`.
    func readAll(_ path: String) throws(OutboxError) -> [UInt8]
    /// Writes `bytes` to `path` (0600) atomically: a temporary file `path + ".tmp"`, its `fsync`,
    /// then `rename` over `path`. The rename is durable only after ``syncDirectory(_:)``.
    func replace(_ path: String, with bytes: [UInt8]) throws(OutboxError)
    /// Removes `path`; a missing file is not an error.
    func remove(_ path: String) throws(OutboxError)
    /// Names of the entries of `directory` (no `.`/`..`).
    func list(_ directory: String) throws(OutboxError) -> [String]
    /// Size of the open file in bytes (0 when unknown).
    func size(_ handle: Int32) -> Int
    /// A second handle on the same open file (closed separately), nil when none can be made.
    func duplicate(_ handle: Int32) -> Int32?
    /// Closes a handle.
    func close(_ handle: Int32)
}

extension OutboxFileSystem {
    /// Consecutive write attempts that may take no byte before ``write(_:to:path:)`` gives up.
    static var maxWriteAttemptsWithoutProgress: Int { 8 }

    /// Writes all of `bytes`, retrying short writes. Attempts that take nothing are retried at
    /// most ``maxWriteAttemptsWithoutProgress`` times in a row, then the write fails with
    /// ``OutboxError/ioFailure(path:operation:errno:)`` (`EIO`) instead of spinning.
    func write(_ bytes: [UInt8], to handle: Int32, path: String) throws(OutboxError) {
        let failure = bytes.withUnsafeBytes { raw -> OutboxError? in
            var offset = 0
            var idle = 0
            while offset < raw.count {
                let written: Int
                do throws(OutboxError) {
                    written = try writeOnce(UnsafeRawBufferPointer(rebasing: raw[offset...]), to: handle, path: path)
                } catch {
                    return error
                }
                if written > 0 {
                    offset += min(written, raw.count - offset)
                    idle = 0
                } else {
                    idle += 1
                    if idle >= Self.maxWriteAttemptsWithoutProgress {
                        return .ioFailure(path: path, operation: "write", errno: EIO)
                    }
                }
            }
            return nil
        }
        if let failure { throw failure }
    }
}

/// The outbox's files on the real disk: raw descriptors, so an append is exactly one `write(2)`
/// and nothing waits in a process buffer. Stateless; callers serialize access to their
/// descriptors.
package struct PosixOutboxFileSystem: OutboxFileSystem {
    package init() {}

    package func makePrivateDirectory(_ path: String) throws(OutboxError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0, errno != EEXIST {
                throw .cannotOpen(path: current, errno: errno)
            }
        }
        var status = stat()
        guard stat(path, &status) == 0 else { throw .cannotOpen(path: path, errno: errno) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw .cannotOpen(path: path, errno: ENOTDIR) }
        if status.st_mode & 0o777 != 0o700, chmod(path, 0o700) != 0 {
            throw .cannotOpen(path: path, errno: errno)
        }
    }

    package func lockFile(_ path: String, directory: String) throws(OutboxError) -> Int32 {
        try OutboxDirectoryLock.acquire(path, directory: directory)
    }

    package func unlockFile(_ handle: Int32) {
        OutboxDirectoryLock.release(handle)
    }

    package func createForAppend(_ path: String, header: [UInt8]) throws(OutboxError) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .ioFailure(path: path, operation: "create", errno: errno) }
        do {
            try write(header, to: descriptor, path: path)
        } catch {
            close(descriptor)
            unlink(path)
            throw error
        }
        return descriptor
    }

    package func openForAppend(_ path: String) throws(OutboxError) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { throw .ioFailure(path: path, operation: "open", errno: errno) }
        return descriptor
    }

    /// One `write(2)` (retrying `EINTR`).
    @inline(__always)
    package func writeOnce(_ bytes: UnsafeRawBufferPointer, to handle: Int32, path: String) throws(OutboxError) -> Int {
        while true {
            let written = Glibc.write(handle, bytes.baseAddress, bytes.count)
            if written >= 0 { return written }
            let code = errno
            if code != EINTR { throw .ioFailure(path: path, operation: "write", errno: code) }
        }
    }

    /// `fsync(2)`, retrying `EINTR`.
    package func sync(_ handle: Int32, path: String) throws(OutboxError) {
        while fsync(handle) != 0 {
            if errno == EINTR { continue }
            throw .ioFailure(path: path, operation: "fsync", errno: errno)
        }
    }

    package func syncDirectory(_ path: String) throws(OutboxError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .ioFailure(path: path, operation: "open directory", errno: errno) }
        defer { close(descriptor) }
        try sync(descriptor, path: path)
    }

    package func truncate(_ handle: Int32, to length: Int) -> Bool {
        ftruncate(handle, off_t(length)) == 0
    }

    package func readAll(_ path: String) throws(OutboxError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .ioFailure(path: path, operation: "open", errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .ioFailure(path: path, operation: "stat", errno: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .ioFailure(path: path, operation: "read", errno: EISDIR) }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var total = 0
        var failure: Int32 = 0
        bytes.withUnsafeMutableBytes { raw in
            while total < raw.count {
                let count = read(descriptor, raw.baseAddress! + total, raw.count - total)
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if count == 0 { break }
                total += count
            }
        }
        if failure != 0 { throw .ioFailure(path: path, operation: "read", errno: failure) }
        if total < bytes.count { bytes.removeSubrange(total...) }
        return bytes
    }

    package func replace(_ path: String, with bytes: [UInt8]) throws(OutboxError) {
        let temporary = path + ".tmp"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .ioFailure(path: temporary, operation: "create", errno: errno) }
        do {
            try write(bytes, to: descriptor, path: temporary)
            try sync(descriptor, path: temporary)
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw .ioFailure(path: path, operation: "rename", errno: code)
        }
    }

    package func remove(_ path: String) throws(OutboxError) {
        if unlink(path) != 0, errno != ENOENT { throw .ioFailure(path: path, operation: "remove", errno: errno) }
    }

    package func list(_ directory: String) throws(OutboxError) -> [String] {
        guard let stream = opendir(directory) else { throw .cannotOpen(path: directory, errno: errno) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    package func size(_ handle: Int32) -> Int {
        var status = stat()
        return fstat(handle, &status) == 0 ? Int(status.st_size) : 0
    }

    package func duplicate(_ handle: Int32) -> Int32? {
        let copy = dup(handle)
        return copy >= 0 ? copy : nil
    }

    package func close(_ handle: Int32) {
        _ = Glibc.close(handle)
    }
}
