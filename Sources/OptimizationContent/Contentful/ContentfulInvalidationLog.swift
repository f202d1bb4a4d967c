/// When entry ids were last invalidated in a ``ContentfulEntryCache``, in bounded memory.
///
/// Each invalidation is a ``Mark``: its place in the cache's sequence of invalidations (what a
/// fetch in flight compares with the sequence it started under) and its clock time (what a copy
/// from the entry store is compared with).
///
/// **Bound.** At most ``capacity`` ids are remembered, in two halves: new marks go to the recent
/// half; when it is full it becomes the previous half and the old previous half is forgotten as a
/// block. A forgotten mark is not lost but merged into ``floor``, which counts for every id: an id
/// the log no longer holds reads as invalidated at the latest forgotten mark. So forgetting only
/// ever makes the cache more careful (a fetch that began, or a stored copy written, before a
/// forgotten invalidation is not kept as fresh), never serves what an invalidation dropped, and
/// repeated invalidations of one id take one slot.
struct ContentfulInvalidationLog {
    /// One invalidation: its sequence number and clock time (ms).
    struct Mark: Equatable {
        var sequence: Int
        var time: Double

        static let never = Mark(sequence: Int.min, time: -.infinity)

        /// The later of both parts.
        func latest(_ other: Mark) -> Mark {
            Mark(sequence: Swift.max(sequence, other.sequence), time: Swift.max(time, other.time))
        }
    }

    /// Most ids remembered (both halves together).
    let capacity: Int
    private var recent: [String: Mark] = [:]
    private var previous: [String: Mark] = [:]
    /// The latest mark in `recent` (merged into `floor` when `recent`'s half is forgotten).
    private var recentLatest = Mark.never
    private var previousLatest = Mark.never
    /// The latest invalidation of everything, or of an id forgotten since.
    private(set) var floor = Mark.never

    /// A log remembering at most `capacity` ids (at least 2).
    init(capacity: Int) {
        self.capacity = Swift.max(2, capacity)
    }

    /// Number of ids remembered: never more than ``capacity``.
    var count: Int { recent.count + previous.count }

    /// Records an invalidation of `id`.
    mutating func record(_ id: String, at mark: Mark) {
        if recent[id] == nil, recent.count >= capacity / 2 {
            floor = floor.latest(previousLatest)
            previous = recent
            previousLatest = recentLatest
            recent = [:]
            recentLatest = .never
        }
        recent[id] = mark
        recentLatest = recentLatest.latest(mark)
    }

    /// Records an invalidation of everything: every id counts as invalidated at `mark` (or at its
    /// own mark, when later: those are merged into ``floor`` as the ids are dropped).
    mutating func recordAll(at mark: Mark) {
        floor = floor.latest(mark).latest(recentLatest).latest(previousLatest)
        recent = [:]
        previous = [:]
        recentLatest = .never
        previousLatest = .never
    }

    /// The last invalidation of `id` (of everything, when later).
    func lastMark(of id: String) -> Mark {
        (recent[id] ?? previous[id] ?? .never).latest(floor)
    }
}
