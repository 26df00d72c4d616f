import CShims
import Dispatch
import Foundation
import Synchronization

/// The time source a player and its sink agree on: a monotonic clock in
/// nanoseconds, and timers that fire against it.
///
/// Real playback uses ``RealTimeClock``. A clock can also be one that moves only when
/// told to (the tests' virtual clock, in `TestSupport`, plays a three-minute queue in
/// milliseconds with exact sample accounting): such a clock takes participants, which it
/// lets settle before each step, and listeners, which it calls after each step. The engine
/// registers both through this protocol and never asks which clock it has; a real clock
/// keeps neither (``addParticipant(settle:isQuiescent:)`` and ``addTimeListener(_:)``
/// return nil), and time moves without anyone's help.
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

    /// A clock that moves only when told: registers something that must be at rest before
    /// time moves on (`settle` flushes its asynchronous work, `isQuiescent` says it is
    /// blocked until time moves or a command arrives). A clock that moves by itself returns
    /// nil and keeps nothing.
    func addParticipant(settle: @escaping @Sendable () -> Void,
                        isQuiescent: @escaping @Sendable () -> Bool) -> (any ClockRegistration)?

    /// A clock that moves only when told: calls `listener` each time it has moved (a sink
    /// whose writer waits for time). A clock that moves by itself returns nil: waiting for
    /// it is waiting on the host's clock.
    func addTimeListener(_ listener: @escaping @Sendable () -> Void) -> (any ClockRegistration)?

    /// A timer for `work` on `queue` that is set again and again (a player's wake-up, once per
    /// tick): ``RealTimeClock`` makes it once and then allocates nothing per deadline.
    ///
    /// `direct`, if given, is tried first at each deadline, without entering `queue` (with
    /// ``RealTimeClock`` on the clock thread): it returns the deadline to set the timer for
    /// again if it did the deadline's work, nil if `work` must run on `queue` as usual. It is
    /// given a test of whether the deadline is still the timer's (not cancelled or set again
    /// since), to call under the lock that also guards the timer's setting; a timer that runs
    /// its work on `queue` anyway (the default below) passes one that is always true.
    func makeTimer(on queue: DispatchQueue, direct: DirectTimerWork?, _ work: @escaping @Sendable () -> Void) -> any ReusableTimer
}

/// A timer's work done without entering its queue (``PlaybackClock/makeTimer(on:direct:_:)``):
/// given a test of whether the deadline is still the timer's, returns the deadline the timer is
/// set for again if it did the work (the clock sets it there itself: with ``RealTimeClock`` the
/// clock thread puts the timer back in its list as it looks for the next deadline, instead of a
/// setting of its own), nil if the work must run on the timer's queue.
public typealias DirectTimerWork = @Sendable (_ isCurrent: () -> Bool) -> UInt64?

extension PlaybackClock {
    public func addParticipant(settle: @escaping @Sendable () -> Void,
                               isQuiescent: @escaping @Sendable () -> Bool) -> (any ClockRegistration)? { nil }
    public func addTimeListener(_ listener: @escaping @Sendable () -> Void) -> (any ClockRegistration)? { nil }

    /// A timer made of one ``schedule(at:on:_:)`` per deadline, whose `direct` work is tried
    /// on `queue` before `work`, told that the deadline is still the timer's. A clock that
    /// takes a cancelled deadline out of its list before it enters `queue` may still run one
    /// that was set again meanwhile: an extra wake-up, which works its time out afresh.
    public func makeTimer(on queue: DispatchQueue, direct: DirectTimerWork?, _ work: @escaping @Sendable () -> Void) -> any ReusableTimer {
        ScheduledWorkTimer(clock: self, queue: queue, direct: direct, work: work)
    }
}

/// A timer of a ``PlaybackClock`` that is set for one deadline at a time, again and again.
///
/// A class: a player reaches its timer at each tick, and copying a reference costs a retain,
/// where an existential of any type was copied through its type's value witnesses (a metadata
/// look-up and calls, the largest cost of setting the timer).
public protocol ReusableTimer: ScheduledWork, AnyObject {
    /// Sets the timer for `deadline` (this clock's nanoseconds), in place of any deadline it
    /// had: its work runs once, on its queue, when the deadline is reached.
    func schedule(at deadline: UInt64)
}

/// ``ReusableTimer`` for any clock: one ``PlaybackClock/schedule(at:on:_:)`` per deadline.
private final class ScheduledWorkTimer: ReusableTimer, Sendable {
    private let clock: any PlaybackClock
    private let queue: DispatchQueue
    private let direct: DirectTimerWork?
    private let work: @Sendable () -> Void
    private let pending = Mutex<(any ScheduledWork)?>(nil)

    init(clock: any PlaybackClock, queue: DispatchQueue, direct: DirectTimerWork?, work: @escaping @Sendable () -> Void) {
        self.clock = clock
        self.queue = queue
        self.direct = direct
        self.work = work
    }

    func schedule(at deadline: UInt64) {
        // The clock keeps the block until it fires or is cancelled, and so the timer: a cancel
        // (the owner's, before it goes) ends that.
        let scheduled = clock.schedule(at: deadline, on: queue) { [self] in fire() }
        pending.withLock { $0?.cancel(); $0 = scheduled }
    }

    /// On `queue`: the direct work if it does the deadline's (setting the timer again where it
    /// says), or else `work`.
    private func fire() {
        if let direct, let next = direct({ true }) {
            schedule(at: next)
        } else {
            work()
        }
    }

    func cancel() {
        pending.withLock { $0?.cancel(); $0 = nil }
    }
}

/// A participant or listener of a ``PlaybackClock``; ``remove()`` ends it.
public protocol ClockRegistration: Sendable {
    /// Ends the registration. Safe to call more than once.
    func remove()
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
/// here a deadline is an entry in a short list, the clock thread sleeps in one
/// futex wait until the earliest one, and runs the work on its queue
/// with `sync`, on the clock thread itself: one wake-up per deadline. A timer's direct work
/// (``PlaybackClock/makeTimer(on:direct:_:)``: a playing player's tick) runs there without
/// entering the queue at all.
public final class RealTimeClock: PlaybackClock {
    /// The one real clock; it has no state of its own.
    public static let shared = RealTimeClock()

    public init() {}

    /// CLOCK_MONOTONIC, read directly: the clock `DispatchTime.now()` reads on Linux, without its layers.
    public func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    public func schedule(at deadline: UInt64, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        let timer = ClockTimer(queue: queue, direct: nil, work: work)
        timer.schedule(at: deadline)
        return timer
    }

    public func makeTimer(on queue: DispatchQueue, direct: DirectTimerWork?, _ work: @escaping @Sendable () -> Void) -> any ReusableTimer {
        ClockTimer(queue: queue, direct: direct, work: work)
    }

    /// On the clock thread, while the work of one of its timers runs: queues `body` to run
    /// on the clock thread right after that work returns (and has left its queue), and
    /// returns true. Anywhere else returns false. Time observers deliver through this:
    /// the tick that computed a time also runs the block, without waking another thread.
    static func runAfterCurrentWork(_ body: any ClockFollowUp) -> Bool {
        ClockThread.shared.runAfterCurrentWork(body)
    }

    /// Whether the calling thread is the clock thread.
    static func isClockThread() -> Bool {
        ClockThread.shared.isCurrentThread
    }

    public func sleep(nanoseconds: UInt64) {
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 { request = remaining }
    }
}

/// Work a timer's work hands on to run on the clock thread after it (an object, not a
/// closure: nothing is allocated per tick).
protocol ClockFollowUp: AnyObject {
    func runAfterClockWork()
}

/// A timer of ``RealTimeClock``, set for one deadline at a time (made once per player, set
/// once per tick: setting it allocates nothing).
///
/// Each setting and each cancel starts a new arming; the clock thread's entry for a deadline
/// carries the arming it was made for and runs the work only if that arming is still current
/// when it holds the queue (a cancel, or a new setting, made there first always wins), and
/// ends it, so one arming never runs twice.
///
/// The `direct` work, when there is one, is tried first on the clock thread, outside the
/// queue: it checks the arming itself (under its owner's lock, which also guards the owner's
/// setting and cancelling of the timer) and sets the timer again when it did the work.
///
/// `arming` and `firing` are atomics, and the rest is set in `init`: nothing needs an owner.
private final class ClockTimer: ReusableTimer, Sendable {
    let queue: DispatchQueue
    private let direct: DirectTimerWork?
    /// The current arming (bumped by every setting and cancel, and by the firing it allows).
    private let arming: Armings
    /// Runs the work for the arming being fired, holding `queue`: made once, so a firing
    /// makes no block.
    private let fireItem: SendableWorkItem

    /// The timer's counts, apart from the timer so that `fireItem` can hold them.
    private final class Armings: Sendable {
        /// The current arming (bumped by every setting and cancel, and by the firing it allows).
        let current = Atomic<UInt64>(0)
        /// The arming the clock thread is firing: stored by the clock thread before it enters
        /// the queue, loaded inside (the queue's entry orders the two).
        let firing = Atomic<UInt64>(0)
    }

    init(queue: DispatchQueue, direct: DirectTimerWork?, work: @escaping @Sendable () -> Void) {
        self.queue = queue
        self.direct = direct
        let arming = Armings()
        self.arming = arming
        fireItem = SendableWorkItem {
            let firing = arming.firing.load(ordering: .relaxed)
            let (current, _) = arming.current.compareExchange(expected: firing, desired: firing &+ 1, ordering: .acquiringAndReleasing)
            if current { work() }
        }
    }

    func schedule(at deadline: UInt64) {
        let armed = arming.current.add(1, ordering: .acquiringAndReleasing).newValue
        ClockThread.shared.add(self, deadline: deadline, arming: armed)
    }

    func cancel() {
        arming.current.add(1, ordering: .acquiringAndReleasing)
        ClockThread.shared.remove(self)
    }

    /// Clock thread: does the work directly if the direct work can, or else on its queue, if
    /// `armed` is still the timer's arming. Returns the deadline the direct work set the timer
    /// for again, in the same arming (the clock thread puts it back in its list, if no setting
    /// or cancel came meanwhile: ``isArmed(_:)``).
    func fire(_ armed: UInt64) -> UInt64? {
        guard arming.current.load(ordering: .acquiring) == armed else { return nil }
        if let direct, let next = direct({ arming.current.load(ordering: .acquiring) == armed }) { return next }
        arming.firing.store(armed, ordering: .relaxed)
        queue.sync(execute: fireItem.item)
        return nil
    }

    /// Whether `armed` is still the timer's arming: no setting or cancel since.
    func isArmed(_ armed: UInt64) -> Bool {
        arming.current.load(ordering: .acquiring) == armed
    }
}

/// The thread that waits for ``RealTimeClock``'s deadlines.
///
/// Each deadline costs one sleep and one wake-up: the thread sleeps in one futex wait with
/// the earliest deadline as its absolute CLOCK_MONOTONIC timeout, and is woken early only
/// when a timer earlier than the one it sleeps for is added. (With a condition variable
/// every wake-up made a second system call: glibc marks the mutex contended when it takes
/// it back after the wait, so unlocking it always entered the kernel.)
///
/// Owner: the timers are under `timers` (a mutex); `followUps` belongs to the clock thread
/// (``runAfterCurrentWork(_:)`` checks `threadID`); `wakeUps` is only reached by futex calls.
private final class ClockThread: @unchecked Sendable {
    static let shared = ClockThread()

    private struct Timers {
        /// A handful of entries (one per player, plus rare others); removing one keeps the
        /// array's storage, so setting a timer again allocates nothing.
        var pending: [Entry] = []
        /// The deadline the thread sleeps until (`.max`: none), or 0 while it runs timers:
        /// an added timer signals the thread only if it is due earlier than this.
        var sleepingUntil: UInt64 = 0
        var started = false
    }

    /// A timer set for a deadline, in the arming it was set in.
    private struct Entry {
        let timer: ClockTimer
        /// `.max` while the timer fires: its place is kept for its next deadline.
        var deadline: UInt64
        let arming: UInt64
    }

    private let timers = Mutex(Timers())
    /// The event count the thread sleeps on (``CShims``); allocated, so its address is stable.
    private let wakeUps: UnsafeMutablePointer<UInt32> = {
        let word = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)
        word.initialize(to: 0)
        return word
    }()
    /// The clock thread, once it runs (for ``runAfterCurrentWork(_:)``).
    private let threadID = Atomic<UInt>(0)
    /// Work handed on by timer work, run once that work has left its queue. Clock thread only.
    ///
    /// Reached through a pointer made once: a stored `var` of a class is checked for exclusive
    /// access at run time at each use (`swift_beginAccess`, twice a tick), memory behind a
    /// pointer is not; and its slots are reused, where emptying an array each tick went through
    /// the standard library's generic `replaceSubrange`.
    private let followUps: UnsafeMutablePointer<FollowUps> = {
        let followUps = UnsafeMutablePointer<FollowUps>.allocate(capacity: 1)
        followUps.initialize(to: FollowUps())
        return followUps
    }()

    /// The follow-ups of the timer work under way, in the order they were handed on.
    private struct FollowUps {
        /// Filled from the start; the ones past `count` are nil.
        var slots: [(any ClockFollowUp)?] = Array(repeating: nil, count: 8)
        var count = 0

        mutating func append(_ body: any ClockFollowUp) {
            if count == slots.count { slots.append(body) } else { slots[count] = body }
            count += 1
        }

        /// The follow-up at `index`, its slot emptied.
        mutating func take(_ index: Int) -> (any ClockFollowUp)? {
            defer { slots[index] = nil }
            return slots[index]
        }
    }

    private init() {}

    func add(_ timer: ClockTimer, deadline: UInt64, arming: UInt64) {
        let (start, signal) = timers.withLock { timers -> (Bool, Bool) in
            // One entry per timer: an entry of an earlier setting would only be skipped.
            if let index = timers.pending.firstIndex(where: { $0.timer === timer }) { timers.pending.remove(at: index) }
            timers.pending.append(Entry(timer: timer, deadline: deadline, arming: arming))
            let start = !timers.started
            timers.started = true
            guard deadline < timers.sleepingUntil else { return (start, false) }
            timers.sleepingUntil = 0
            return (start, true)
        }
        if start {
            let thread = Thread { [self] in
                setKernelThreadName("qp.clock")
                run()
            }
            thread.name = "queueplayer.clock"
            thread.qualityOfService = .userInteractive
            thread.start()
        }
        if signal { cfutex_bump_and_wake(wakeUps) }
    }

    func remove(_ timer: ClockTimer) {
        timers.withLock { timers in
            if let index = timers.pending.firstIndex(where: { $0.timer === timer }) { timers.pending.remove(at: index) }
        }
    }

    /// Whether the calling thread is the clock thread.
    var isCurrentThread: Bool { threadID.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// Clock thread, during a timer's work: runs `body` once that work has returned and
    /// released its queue. Elsewhere: returns false and does nothing.
    func runAfterCurrentWork(_ body: any ClockFollowUp) -> Bool {
        guard isCurrentThread else { return false }
        followUps.pointee.append(body)
        return true
    }

    private enum Step {
        case fire(ClockTimer, arming: UInt64, deadline: UInt64)
        case sleep(until: UInt64)
        case wait
    }

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .relaxed)
        // Once: reaching a global checks its lazy initialisation (`swift_once`) each time.
        let clock = RealTimeClock.shared
        // The timer just fired, in its arming, and the deadline its direct work set it for again.
        // Its entry keeps its place in the list while it fires (its deadline out of reach), and
        // the next look sets it there or takes it out: the list's storage is not moved per tick
        // (`remove(at:)` and `append` called libc's `memmove` and checked the storage's uniqueness).
        var fired: (timer: ClockTimer, arming: UInt64, setAgainAt: UInt64?)?
        // A deadline the clock is known to be past (the one a wait ran out at, or the one just
        // fired): all the next look needs to fire what was due by then, without reading the
        // clock; what fell due since is fired after a wait that returns at once.
        var passed: UInt64?
        while true {
            // Read before deciding: a timer added after this makes the wait below return at once.
            let seen = cfutex_load(wakeUps)
            let now = passed ?? clock.now()
            passed = nil
            let step = timers.withLock { timers -> Step in
                // Under the lock a setting or cancel takes after changing the arming: one made
                // since the work returned has taken the entry out (and put its own in), as `add`
                // and `remove` do.
                if let (timer, arming, next) = fired {
                    fired = nil
                    // By index: `firstIndex(where:)`, unspecialised in a debug build, allocated.
                    var index = 0
                    while index < timers.pending.count, timers.pending[index].timer !== timer || timers.pending[index].arming != arming {
                        index += 1
                    }
                    if index < timers.pending.count {
                        if let next, timer.isArmed(arming) {
                            timers.pending[index].deadline = next
                        } else {
                            timers.pending.remove(at: index)
                        }
                    }
                }
                var earliest = -1
                for index in timers.pending.indices where earliest < 0 || timers.pending[index].deadline < timers.pending[earliest].deadline {
                    earliest = index
                }
                guard earliest >= 0 else {
                    timers.sleepingUntil = .max
                    return .wait
                }
                let deadline = timers.pending[earliest].deadline
                if deadline > now {
                    timers.sleepingUntil = deadline
                    return .sleep(until: deadline)
                }
                timers.sleepingUntil = 0
                timers.pending[earliest].deadline = .max
                return .fire(timers.pending[earliest].timer, arming: timers.pending[earliest].arming, deadline: deadline)
            }
            switch step {
            case .wait:
                _ = cfutex_wait(wakeUps, seen, nil)
            case let .sleep(deadline):
                // Until the deadline (CLOCK_MONOTONIC, the clock's own), or until an earlier timer is added.
                var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                if cfutex_wait(wakeUps, seen, &until) != 0 { passed = deadline }
            case let .fire(timer, arming, deadline):
                fired = (timer, arming, timer.fire(arming))
                passed = deadline
                // Each access to the list is over before a follow-up runs: one may hand on another.
                var index = 0
                while index < followUps.pointee.count {
                    let body = followUps.pointee.take(index)
                    body?.runAfterClockWork()
                    index += 1
                }
                followUps.pointee.count = 0
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
