#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// The engine's recursive lock: a pthread mutex alone on its own cache lines
/// (``CacheLineIsolated``).
///
/// Threads of an engine pool each lock their own engine several times per call. With
/// `NSRecursiveLock` the lock objects of engines created one after another could sit in one cache
/// line, so two threads working on different engines still bounced that line between their cores
/// (in some runs a warm resolve then cost 1.4–1.8 times as much CPU with two threads as with
/// one).
struct EngineLock: ~Copyable, @unchecked Sendable {
    private let storage = CacheLineIsolated(pthread_mutex_t())
    private var mutex: UnsafeMutablePointer<pthread_mutex_t> { storage.pointer }

    init() {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        let status = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
    }

    func lock() {
        let status = pthread_mutex_lock(mutex)
        precondition(status == 0, "pthread_mutex_lock failed: \(status)")
    }

    func unlock() {
        let status = pthread_mutex_unlock(mutex)
        precondition(status == 0, "pthread_mutex_unlock failed: \(status)")
    }

    /// Takes the lock if no other thread holds it; true when taken.
    func `try`() -> Bool {
        pthread_mutex_trylock(mutex) == 0
    }

    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
