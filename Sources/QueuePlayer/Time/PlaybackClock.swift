import Dispatch
import Foundation
import Synchronization

/// The time source a player and its sink agree on: a monotonic clock in
/// nanoseconds, and timers that fire against it.
///
/// Real playback uses ``RealTimeClock``; tests use ``VirtualClock`` so a
/// three-minute queue is played in milliseconds with exact sample accounting.
public protocol PlaybackClock: AnyObject, Sendable {
    /// Monotonic time in nanoseconds.
    func now() -> UInt64

    /// Runs `work` on `queue` once `deadline` (nanoseconds, this clock) is reached.
    ///
    /// ``RealTimeClock`` runs every deadline from one thread, entering `queue` as `sync`
    /// does: give it a queue that is never busy for long, or hop from a queue of your own.
    func schedule(at deadline: UInt64, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork

    /// Blocks the calling thread for `nanoseconds` of this clock's time.
    ///
    /// Only a real-time clock sleeps; a virtual clock returns at once (its
    /// waiting is done by whoever advances it).
    func sleep(nanoseconds: UInt64)
}

/// A pending timer of a ``PlaybackClock``.
public protocol ScheduledWork: Sendable {
    /// Cancels the timer if it has not fired yet. Safe to call more than once.
    func cancel()
}

/// The host's monotonic clock (the one Dispatch timers use), with timers that
/// fire on one shared clock thread.
///
/// A periodic observer every 10 ms reschedules the player's timer 100 times a
/// second. A Dispatch timer source per deadline costs a source, a `timerfd`
/// change, a poke of Dispatch's manager thread and a worker wake-up each time;
/// here a deadline is an entry in a short list, the clock thread sleeps on a
/// condition variable until the earliest one, and runs the work on its queue
/// with `sync`, on the clock thread itself: one wake-up per deadline.
public final class RealTimeClock: PlaybackClock {
    /// The one real clock; it has no state of its own.
    public static let shared = RealTimeClock()

    public init() {}

    public func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    public func schedule(at deadline: UInt64, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        let timer = ClockTimer(deadline: deadline, queue: queue, work: work)
        ClockThread.shared.add(timer)
        return timer
    }

    /// On the clock thread, while the work of one of its timers runs: queues `body` to run
    /// on the clock thread right after that work returns (and has left its queue), and
    /// returns true. Anywhere else returns false. Time observers deliver through this:
    /// the tick that computed a time also runs the block, without waking another thread.
    static func runAfterCurrentWork(_ body: @escaping () -> Void) -> Bool {
        ClockThread.shared.runAfterCurrentWork(body)
    }

    public func sleep(nanoseconds: UInt64) {
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 { request = remaining }
    }
}

/// One deadline of ``RealTimeClock``.
private final class ClockTimer: ScheduledWork, @unchecked Sendable {
    enum State: UInt8 { case pending, cancelled, fired }

    let deadline: UInt64
    let queue: DispatchQueue
    let work: @Sendable () -> Void
    let state = Atomic<UInt8>(State.pending.rawValue)

    init(deadline: UInt64, queue: DispatchQueue, work: @escaping @Sendable () -> Void) {
        self.deadline = deadline
        self.queue = queue
        self.work = work
    }

    func cancel() {
        let (exchanged, _) = state.compareExchange(expected: State.pending.rawValue, desired: State.cancelled.rawValue,
                                                   ordering: .acquiringAndReleasing)
        if exchanged { ClockThread.shared.remove(self) }
    }

    /// Clock thread: runs the work on its queue, unless it was cancelled first (checked on
    /// that queue, so a cancel made there before the work gets its turn always wins).
    func fire() {
        queue.sync {
            let (exchanged, _) = state.compareExchange(expected: State.pending.rawValue, desired: State.fired.rawValue,
                                                       ordering: .acquiringAndReleasing)
            if exchanged { work() }
        }
    }
}

/// The thread that waits for ``RealTimeClock``'s deadlines.
private final class ClockThread: @unchecked Sendable {
    static let shared = ClockThread()

    // Allocated, so their addresses are stable (`&` on a stored property promises no such thing).
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Guarded by `mutex`; a handful of entries (one per player, plus rare others).
    private var timers: [ClockTimer] = []
    private var started = false
    private var thread: pthread_t?
    /// Work handed on by timer work, run once that work has left its queue. Clock thread only.
    private var followUps: [() -> Void] = []

    private init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    func add(_ timer: ClockTimer) {
        pthread_mutex_lock(mutex)
        timers.append(timer)
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "queueplayer.clock"
            thread.qualityOfService = .userInteractive
            thread.start()
        }
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    func remove(_ timer: ClockTimer) {
        pthread_mutex_lock(mutex)
        if let index = timers.firstIndex(where: { $0 === timer }) { timers.remove(at: index) }
        pthread_mutex_unlock(mutex)
    }

    /// Clock thread, during a timer's work: runs `body` once that work has returned and
    /// released its queue. Elsewhere: returns false and does nothing.
    func runAfterCurrentWork(_ body: @escaping () -> Void) -> Bool {
        guard let thread, pthread_equal(thread, pthread_self()) != 0 else { return false }
        followUps.append(body)
        return true
    }

    private func run() {
        pthread_mutex_lock(mutex)
        thread = pthread_self()
        while true {
            guard let index = timers.indices.min(by: { timers[$0].deadline < timers[$1].deadline }) else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            let deadline = timers[index].deadline
            let now = DispatchTime.now().uptimeNanoseconds
            if deadline > now {
                // Sleep until the deadline (or until an earlier one is added).
                var until = timespec()
                clock_gettime(CLOCK_MONOTONIC, &until)
                let target = UInt64(until.tv_sec) * 1_000_000_000 + UInt64(until.tv_nsec) + (deadline - now)
                until = timespec(tv_sec: Int(target / 1_000_000_000), tv_nsec: Int(target % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &until)
                continue
            }
            let timer = timers.remove(at: index)
            pthread_mutex_unlock(mutex)
            timer.fire()
            while !followUps.isEmpty {
                let pending = followUps
                followUps.removeAll(keepingCapacity: true)
                for body in pending { body() }
            }
            pthread_mutex_lock(mutex)
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
