#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin POSIX helpers for the outbox's files: raw descriptors, so an append is exactly one
/// `write(2)` and nothing waits in a process buffer. Every failure becomes an ``OutboxError``.
/// Stateless; callers serialize access to their descriptors.
enum OutboxFileSystem {
    /// Creates `path` (and missing parents) with mode 0700; an existing directory is set to 0700.
    static func makePrivateDirectory(_ path: String) throws(OutboxError) {
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

    /// Opens (creating with mode 0600) `path` and takes an exclusive `flock` without waiting.
    /// - Returns: the descriptor holding the lock (closing it releases the lock).
    /// - Throws: ``OutboxError/directoryLocked(path:)`` when another descriptor holds it.
    static func lockFile(_ path: String, directory: String) throws(OutboxError) -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(descriptor)
            if code == EWOULDBLOCK { throw .directoryLocked(path: directory) }
            throw .cannotOpen(path: path, errno: code)
        }
        return descriptor
    }

    /// Creates `path` (mode 0600, must not exist) for appending and writes `header`.
    static func createForAppend(_ path: String, header: [UInt8]) throws(OutboxError) -> Int32 {
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

    /// Opens an existing file for appending.
    static func openForAppend(_ path: String) throws(OutboxError) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { throw .ioFailure(path: path, operation: "open", errno: errno) }
        return descriptor
    }

    /// Writes all of `bytes` (retrying short writes and `EINTR`).
    static func write(_ bytes: [UInt8], to descriptor: Int32, path: String) throws(OutboxError) {
        var failure: Int32 = 0
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if failure != 0 { throw .ioFailure(path: path, operation: "write", errno: failure) }
    }

    /// `fsync(2)`, retrying `EINTR`.
    static func sync(_ descriptor: Int32, path: String) throws(OutboxError) {
        while fsync(descriptor) != 0 {
            if errno == EINTR { continue }
            throw .ioFailure(path: path, operation: "fsync", errno: errno)
        }
    }

    /// `fsync(2)` of a directory, so created, renamed and removed names are durable.
    static func syncDirectory(_ path: String) throws(OutboxError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .ioFailure(path: path, operation: "open directory", errno: errno) }
        defer { close(descriptor) }
        try sync(descriptor, path: path)
    }

    /// Cuts `descriptor`'s file back to `length` bytes (undoing a failed append).
    static func truncate(_ descriptor: Int32, to length: Int) -> Bool {
        ftruncate(descriptor, off_t(length)) == 0
    }

    /// The whole content of `path`.
    static func readAll(_ path: String) throws(OutboxError) -> [UInt8] {
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

    /// Writes `bytes` to a new file `path` (0600) atomically: a temporary file, `fsync`, `rename`.
    static func replace(_ path: String, with bytes: [UInt8]) throws(OutboxError) {
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

    /// Removes `path`; a missing file is not an error.
    static func remove(_ path: String) throws(OutboxError) {
        if unlink(path) != 0, errno != ENOENT { throw .ioFailure(path: path, operation: "remove", errno: errno) }
    }

    /// Names of the entries of `directory` (no `.`/`..`).
    static func list(_ directory: String) throws(OutboxError) -> [String] {
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

    /// Size of the open file.
    static func size(_ descriptor: Int32) -> Int {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? Int(status.st_size) : 0
    }
}
