/// A growable stack whose top run can be MOVED out into a new array: no element is copied,
/// retained or released on the way (the parser's containers are built this way, so parsing a
/// document costs one allocation per container and no reference-count traffic for its members).
///
/// Not copyable (it owns its storage); not thread-safe (one parser, one thread).
struct MoveStack<Element>: ~Copyable {
    private var storage: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 32) {
        self.capacity = max(1, capacity)
        storage = .allocate(capacity: self.capacity)
    }

    deinit {
        storage.deinitialize(count: count)
        storage.deallocate()
    }

    mutating func push(_ element: consuming Element) {
        if count == capacity { grow() }
        (storage + count).initialize(to: element)
        count += 1
    }

    /// The elements from `start` to the top, in order, for reading.
    func withElements<Result>(from start: Int, _ body: (UnsafeBufferPointer<Element>) throws -> Result) rethrows -> Result {
        try body(UnsafeBufferPointer(start: storage + start, count: count - start))
    }

    /// Moves the elements from `start` to the top into a new array and shrinks the stack to
    /// `start`.
    mutating func popArray(from start: Int) -> ContiguousArray<Element> {
        let moved = count - start
        let source = storage + start
        let result = ContiguousArray<Element>(unsafeUninitializedCapacity: moved) { buffer, initialized in
            buffer.baseAddress.unsafelyUnwrapped.moveInitialize(from: source, count: moved)
            initialized = moved
        }
        count = start
        return result
    }

    private mutating func grow() {
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: storage, count: count)
        storage.deallocate()
        storage = larger
        capacity *= 2
    }
}
