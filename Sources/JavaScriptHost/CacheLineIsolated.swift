/// A value alone on its own cache lines: a 128-byte-aligned block of at least 128 bytes (two
/// lines, for the adjacent-line prefetcher).
///
/// For state that one thread writes on every call while other threads write similar state of
/// their own (an engine pool): ordinary objects allocated one after another can share a line, and
/// then threads working on different engines still bounce it between their cores. A noncopyable
/// struct rather than a class, so there is no small wrapper object whose reference count could
/// itself share a line with another engine's. Not thread-safe: the owner guards ``pointer``.
struct CacheLineIsolated<Value>: ~Copyable, @unchecked Sendable {
    private static var blockSize: Int { max(128, (MemoryLayout<Value>.stride + 127) / 128 * 128) }
    /// Stable for the object's lifetime (a `pthread_mutex_t` may live here).
    let pointer: UnsafeMutablePointer<Value>

    init(_ value: Value) {
        let block = UnsafeMutableRawPointer.allocate(byteCount: Self.blockSize, alignment: 128)
        block.initializeMemory(as: UInt8.self, repeating: 0, count: Self.blockSize)
        pointer = block.bindMemory(to: Value.self, capacity: 1)
        pointer.initialize(to: value)
    }

    deinit {
        pointer.deinitialize(count: 1)
        UnsafeMutableRawPointer(pointer).deallocate()
    }
}
