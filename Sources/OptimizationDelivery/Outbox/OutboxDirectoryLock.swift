#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The ownership lock of an outbox directory: a POSIX record lock (`fcntl(F_SETLK)`, write lock
/// over the whole file) on its lock file, plus a registry of the directories this process owns.
///
/// - **Between processes** the record lock excludes: it belongs to the process, is released when
///   the process ends (SIGKILL included) and is **not inherited** by children. A child spawned
///   while an outbox is open (even one that briefly shares the descriptor between `fork` and
///   `exec`) therefore never keeps the directory locked after ``release(_:)``. A `flock` lock,
///   which lives on the open file description, would stay held by such a child.
/// - **Within the process** record locks do not conflict, and closing *any* descriptor of the
///   file drops them; the registry, keyed by the directory's device and inode, refuses a second
///   owner before the lock file is ever opened again.
///
/// Thread-safe; one mutex serializes acquiring and releasing.
enum OutboxDirectoryLock {
    private struct DirectoryIdentity: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    /// Owned directories and the descriptor holding each one's lock.
    private static let owned = Mutex<[Int32: DirectoryIdentity]>([:])

    /// Opens (creating with mode 0600) `path`, a file inside `directory`, and locks it.
    /// - Returns: the descriptor holding the lock; give it back to ``release(_:)``.
    /// - Throws: ``OutboxError/directoryOwnedInThisProcess(path:)`` when this process owns
    ///   `directory`, ``OutboxError/directoryLocked(path:)`` when another process does, ``OutboxError/cannotOpen(path:errno:)`` when it cannot be opened or locked.
    static func acquire(_ path: String, directory: String) throws(OutboxError) -> Int32 {
        var status = stat()
        guard stat(directory, &status) == 0 else { throw .cannotOpen(path: directory, errno: errno) }
        let identity = DirectoryIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        let result: Result<Int32, OutboxError> = owned.withLock { owned in
            if owned.values.contains(identity) { return .failure(.directoryOwnedInThisProcess(path: directory)) }
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { return .failure(.cannotOpen(path: path, errno: errno)) }
            var lock = flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            lock.l_start = 0
            lock.l_len = 0
            while fcntl(descriptor, F_SETLK, &lock) != 0 {
                let code = errno
                if code == EINTR { continue }
                close(descriptor)
                if code == EAGAIN || code == EACCES { return .failure(.directoryLocked(path: directory)) }
                return .failure(.cannotOpen(path: path, errno: code))
            }
            owned[descriptor] = identity
            return .success(descriptor)
        }
        return try result.get()
    }

    /// Releases the lock taken by ``acquire(_:directory:)`` and closes its descriptor.
    static func release(_ descriptor: Int32) {
        owned.withLock { owned in
            guard owned.removeValue(forKey: descriptor) != nil else { return }
            close(descriptor)
        }
    }
}
