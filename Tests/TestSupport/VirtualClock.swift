import Dispatch
import QueuePlayer
import Synchronization

/// A clock that stands still until a test advances it.
///
/// Timers scheduled on it fire, in deadline order, on their queues while
/// ``advance(by:)`` runs; between steps the clock waits until every participant
/// (the player's render thread and control queue) has settled, so what a test
/// observes does not depend on thread scheduling.
///
/// The engine knows nothing of it: the player, its sink and its time observers register
/// through ``PlaybackClock``'s participants and listeners, which a real clock ignores.
public final class VirtualClock: PlaybackClock {
    private struct Timer {
        let id: UInt64
        let deadline: UInt64
        let queue: DispatchQueue
        let work: @Sendable () -> Void
    }

    private struct State {
        var now: UInt64 = 1_000_000_000
        var nextID: UInt64 = 0
        var timers: [Timer] = []
        var participants: [UInt64: Participant] = [:]
        var listeners: [UInt64: @Sendable () -> Void] = [:]
    }

    /// Something that must be at rest before virtual time moves on.
    struct Participant {
        /// Flushes asynchronous work (for example `queue.sync {}`).
        let settle: @Sendable () -> Void
        /// True when it is blocked until time moves or a command arrives.
        let isQuiescent: @Sendable () -> Bool
    }

    private let state = Mutex(State())

    /// The largest step time takes at once, so a sink's buffer never underruns
    /// between refills.
    public let maximumStep: UInt64

    /// Creates a clock whose time advances in steps of at most `maximumStepNanoseconds`.
    public init(maximumStepNanoseconds: UInt64 = 2_000_000) {
        self.maximumStep = maximumStepNanoseconds
    }

    public func now() -> UInt64 { state.withLock { $0.now } }

    public func schedule(at deadline: UInt64, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.timers.append(Timer(id: state.nextID, deadline: deadline, queue: queue, work: work))
            return state.nextID
        }
        return VirtualTimerWork(clock: self, id: id)
    }

    public func sleep(nanoseconds: UInt64) {}

    /// Moves time forward by `seconds`, firing due timers in order and letting
    /// the participants settle after every step.
    public func advance(bySeconds seconds: Double) {
        advance(byNanoseconds: UInt64((seconds * 1e9).rounded()))
    }

    /// Moves time forward by `nanoseconds`; see ``advance(bySeconds:)``.
    public func advance(byNanoseconds nanoseconds: UInt64) {
        let target = now() + nanoseconds
        while true {
            waitForQuiescence()
            let (current, due) = state.withLock { state -> (UInt64, Timer?) in
                let earliest = state.timers.indices.min { state.timers[$0].deadline < state.timers[$1].deadline }
                if let index = earliest, state.timers[index].deadline <= state.now {
                    return (state.now, state.timers.remove(at: index))
                }
                return (state.now, nil)
            }
            if let due {
                due.queue.sync(execute: due.work)
                continue
            }
            if current >= target { break }
            let nextDeadline = state.withLock { $0.timers.map(\.deadline).min() } ?? UInt64.max
            let stepEnd = min(target, nextDeadline, current + maximumStep)
            let listeners = state.withLock { state -> [@Sendable () -> Void] in
                state.now = max(state.now, stepEnd)
                return Array(state.listeners.values)
            }
            for listener in listeners { listener() }
        }
        waitForQuiescence()
    }

    /// Registers a participant (``PlaybackClock``): time moves on only once it has settled.
    public func addParticipant(settle: @escaping @Sendable () -> Void,
                               isQuiescent: @escaping @Sendable () -> Bool) -> (any ClockRegistration)? {
        let key = state.withLock { state in
            state.nextID += 1
            state.participants[state.nextID] = Participant(settle: settle, isQuiescent: isQuiescent)
            return state.nextID
        }
        return VirtualClockRegistration { [weak self] in _ = self?.state.withLock { $0.participants.removeValue(forKey: key) } }
    }

    /// Registers a callback run each time the clock moves (``PlaybackClock``: a sink wakes its writer).
    public func addTimeListener(_ listener: @escaping @Sendable () -> Void) -> (any ClockRegistration)? {
        let key = state.withLock { state in
            state.nextID += 1
            state.listeners[state.nextID] = listener
            return state.nextID
        }
        return VirtualClockRegistration { [weak self] in _ = self?.state.withLock { $0.listeners.removeValue(forKey: key) } }
    }

    fileprivate func cancel(_ id: UInt64) {
        state.withLock { $0.timers.removeAll { $0.id == id } }
    }

    /// Blocks until every participant has settled twice in a row.
    public func waitForQuiescence() {
        let participants = state.withLock { Array($0.participants.values) }
        if participants.isEmpty { return }
        var spins = 0
        var stableRounds = 0
        while stableRounds < 2 {
            for participant in participants { participant.settle() }
            if participants.allSatisfy({ $0.isQuiescent() }) {
                stableRounds += 1
            } else {
                stableRounds = 0
                spins += 1
                precondition(spins < 2_000_000, "VirtualClock: a participant never settled")
                if spins > 100 { usleep(20) } else { sched_yield() }
            }
        }
    }
}

private struct VirtualClockRegistration: ClockRegistration {
    let end: @Sendable () -> Void
    func remove() { end() }
}

private struct VirtualTimerWork: ScheduledWork {
    let clock: VirtualClock
    let id: UInt64
    func cancel() { clock.cancel(id) }
}

#if canImport(Glibc)
import Glibc
#endif
