import Foundation
import MallocInterposerSwift

/// Counts `malloc` calls of the whole process with package-benchmark's interposer
/// (ordo-one/malloc-interposer). Counting works only when the interposer's library is loaded
/// before the C library's allocator is bound: ``preloadInterposer()`` re-executes the benchmark
/// with `LD_PRELOAD` naming the interposer built next to it, once.
enum AllocationCounter {
    private static let preloadedMarker = "OPTIMIZATION_BENCH_INTERPOSER_PRELOADED"

    /// Whether a `malloc` made now is counted.
    static var isCounting: Bool {
        MallocInterposerSwift.initialize()
        MallocInterposerSwift.hook()
        // Through the Swift runtime's allocator, which the optimizer cannot remove as it can an
        // unused malloc/free pair.
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        pointer.deallocate()
        MallocInterposerSwift.unhook()
        return MallocInterposerSwift.getStatistics().mallocCount > 0
    }

    /// Returns when allocations are counted; otherwise replaces the process with itself, the
    /// interposer preloaded (the same arguments). Throws when that is impossible or did not help.
    static func preloadInterposer() throws {
        if isCounting { return }
        guard getenv(preloadedMarker) == nil else {
            throw BenchFailure("allocation counting does not work even with the interposer preloaded")
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let library = executable.deletingLastPathComponent().appendingPathComponent("libMallocInterposerSwift.so").path
        guard FileManager.default.fileExists(atPath: library) else {
            throw BenchFailure("allocation counting needs \(library) (built with the benchmark)")
        }
        let existing = getenv("LD_PRELOAD").map { String(cString: $0) }
        setenv("LD_PRELOAD", existing.map { "\(library):\($0)" } ?? library, 1)
        setenv(preloadedMarker, "1", 1)
        execv(executable.path, CommandLine.unsafeArgv)
        throw BenchFailure("cannot re-execute the benchmark with the interposer preloaded: errno \(errno)")
    }

    /// The allocations `body` makes (every thread of the process counts while it runs).
    static func count(_ body: () throws -> Void) rethrows -> Int {
        MallocInterposerSwift.initialize()
        MallocInterposerSwift.hook()
        defer { MallocInterposerSwift.unhook() }
        try body()
        return MallocInterposerSwift.getStatistics().mallocCount
    }
}
