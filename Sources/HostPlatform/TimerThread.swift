#if os(Linux)
import Dispatch
import Foundation

/// The thread behind every ``SystemClock`` timer: a deadline-ordered heap of pending timers and
/// one thread that sleeps until the earliest of them.
///
/// Arming a timer that is not the earliest, and cancelling any timer, only takes a lock: no
/// thread wakes up. So the common timer of a request (a budget armed when the request starts and
/// cancelled when it ends, long before its deadline) costs no context switch; only a timer that
/// fires, or a new earliest one, wakes the thread. (`DispatchQueue.asyncAfter` wakes Dispatch's
/// manager thread to arm every timer, and again when a cancelled one's deadline passes.)
///
/// A fired timer's action is dispatched to the queue its clock names (never run on this thread).
/// Cancelled timers are dropped when they reach the top of the heap, and the heap is rebuilt from
/// the live timers whenever the cancelled ones outnumber them, so memory stays proportional to
/// the timers pending.
///
/// **Threading.** Thread-safe. The thread starts with the first timer and lives as long as the
/// process.
final class TimerThread: @unchecked Sendable {
    // @unchecked: every stored property is guarded by `mutex` (a pthread mutex paired with `condition`).

    /// The process's timer thread.
    static let shared = TimerThread()

    private struct Pending {
        let action: @Sendable () -> Void
        let queue: DispatchQueue
    }

    /// A heap entry: a deadline (monotonic nanoseconds) and the id of its timer (FIFO among equal deadlines).
    private struct Entry {
        let deadline: UInt64
        let id: UInt64

        func isBefore(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : id < other.id
        }
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var heap: [Entry] = []
    private var pending: [UInt64: Pending] = [:]
    private var nextId: UInt64 = 0
    /// When the thread wakes next (monotonic ns); `.max` while it waits for a signal only.
    private var plannedWake: UInt64 = .max
    private var started = false
    /// Times the thread woke up (signal or deadline), for tests.
    private var wakes = 0

    private init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// Arms a timer: `action` runs on `queue` once `nanoseconds` from now have passed, unless
    /// ``cancel(_:)`` comes first.
    /// - Returns: the timer's id for ``cancel(_:)``.
    func schedule(afterNanoseconds nanoseconds: UInt64, on queue: DispatchQueue, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        let now = Self.monotonicNow()
        let deadline = now &+ min(nanoseconds, UInt64.max / 4)
        pthread_mutex_lock(mutex)
        nextId &+= 1
        let id = nextId
        pending[id] = Pending(action: action, queue: queue)
        push(Entry(deadline: deadline, id: id))
        let mustWake = deadline < plannedWake
        if mustWake { plannedWake = deadline }
        let mustStart = !started
        started = true
        pthread_mutex_unlock(mutex)
        if mustStart {
            let thread = Thread { [self] in run() }
            thread.name = "optimization.timers"
            thread.qualityOfService = .utility
            thread.start()
        } else if mustWake {
            pthread_cond_signal(condition)
        }
        return id
    }

    /// Cancels the timer `id`: its action never runs unless it has already been dispatched.
    /// Never wakes the thread. Idempotent.
    func cancel(_ id: UInt64) {
        pthread_mutex_lock(mutex)
        if pending.removeValue(forKey: id) != nil, heap.count > 64, heap.count > 2 * pending.count {
            rebuildHeap()
        }
        pthread_mutex_unlock(mutex)
    }

    /// Times the thread has woken up so far (for tests).
    var wakeCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return wakes
    }

    /// Timers armed and neither fired nor cancelled (for tests).
    var pendingCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return pending.count
    }

    // MARK: The thread

    private func run() {
        pthread_mutex_lock(mutex)
        while true {
            let now = Self.monotonicNow()
            var due: [Pending] = []
            while let top = heap.first, top.deadline <= now || pending[top.id] == nil {
                popTop()
                if let fired = pending.removeValue(forKey: top.id) { due.append(fired) }
            }
            if !due.isEmpty {
                pthread_mutex_unlock(mutex)
                for fired in due { fired.queue.async(execute: fired.action) }
                pthread_mutex_lock(mutex)
                continue  // the heap may have changed meanwhile
            }
            if let top = heap.first {
                plannedWake = top.deadline
                var time = timespec(tv_sec: Int(top.deadline / 1_000_000_000), tv_nsec: Int(top.deadline % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &time)
            } else {
                plannedWake = .max
                pthread_cond_wait(condition, mutex)
            }
            wakes += 1
        }
    }

    // MARK: The heap (called with the mutex held)

    private func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].isBefore(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            let right = left + 1
            let child = right < heap.count && heap[right].isBefore(heap[left]) ? right : left
            guard heap[child].isBefore(heap[parent]) else { return }
            heap.swapAt(child, parent)
            parent = child
        }
    }

    /// Drops the cancelled entries and restores the heap order.
    private func rebuildHeap() {
        heap.removeAll { pending[$0.id] == nil }
        var index = heap.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    private static func monotonicNow() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
#endif
