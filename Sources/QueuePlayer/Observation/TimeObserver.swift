import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The token ``QueuePlayer/addPeriodicTimeObserver(forInterval:queue:using:)``
/// and ``QueuePlayer/addBoundaryTimeObserver(forTimes:queue:using:)`` return.
///
/// Pass it to ``QueuePlayer/removeTimeObserver(_:)``; releasing it removes the
/// observer too.
public final class TimeObserverToken: Sendable, Hashable {
    let id: UInt64
    private weak let player: QueuePlayer?

    init(id: UInt64, player: QueuePlayer) {
        self.id = id
        self.player = player
    }

    var owner: QueuePlayer? { player }

    deinit { player?.removeTimeObserver(id: id) }

    public static func == (lhs: TimeObserverToken, rhs: TimeObserverToken) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Delivers times to a user block on the user's queue, coalescing late ticks
/// and guaranteeing that no call starts once ``cancel()`` has returned.
///
/// Its changing state is under a mutex (``Calls``); everything else is set in `init`.
final class TimeObserverDelivery: ClockFollowUp, Sendable {
    let queue: DispatchQueue
    private let isMainQueue: Bool
    private let calls: Calls
    /// ``Calls/run()`` as a work item made once: `queue.sync { run() }` made a block (two
    /// allocations) on every tick it delivered from the clock thread.
    private let syncRun: SendableWorkItem

    /// The block and the state of its calls, apart from the delivery so that `syncRun` can
    /// hold them before the delivery exists.
    private final class Calls: Sendable {
        struct State {
            var isActive = true
            var isScheduled = false
            var latest: MediaTime = .zero
            var running: Runner?
            /// Cancels waiting for the running call to return (signalled through `callReturned`).
            var cancelsWaiting = 0
            /// The clock's participant, when the clock moves only when told (a test's).
            var clockParticipant: (any ClockRegistration)?
        }

        /// The thread a call runs on: the clock thread's is known without asking (`pthread_self`
        /// is a call into the shared libc, a cold page for a tick), another is asked.
        enum Runner {
            case clockThread
            case thread(pthread_t)

            /// Whether this is the calling thread (``cancel()`` does not wait for a call of its own).
            var isCallingThread: Bool {
                switch self {
                case .clockThread: RealTimeClock.isClockThread()
                case .thread(let thread): pthread_equal(thread, pthread_self()) != 0
                }
            }
        }

        let state = Mutex(State())
        let callReturned = DispatchSemaphore(value: 0)
        private let block: @Sendable (MediaTime) -> Void

        init(block: @escaping @Sendable (MediaTime) -> Void) {
            self.block = block
        }

        /// Makes the waiting call, on the delivery's queue (from the clock thread, holding it).
        func run(onClockThread: Bool) {
            let time: MediaTime? = state.withLock { state in
                state.isScheduled = false
                guard state.isActive else { return nil }
                state.running = onClockThread ? .clockThread : .thread(pthread_self())
                return state.latest
            }
            guard let time else { return }
            block(time)
            let waiting = state.withLock { state in
                state.running = nil
                defer { state.cancelsWaiting = 0 }
                return state.cancelsWaiting
            }
            for _ in 0..<waiting { callReturned.signal() }
        }
    }

    init(queue: DispatchQueue, clock: any PlaybackClock, block: @escaping @Sendable (MediaTime) -> Void) {
        self.queue = queue
        isMainQueue = queue === DispatchQueue.main
        let calls = Calls(block: block)
        self.calls = calls
        // Under a clock that moves only when told, time waits for the block, so no tick is
        // coalesced by chance; a real clock keeps no participant.
        if let participant = clock.addParticipant(settle: { queue.sync {} }, isQuiescent: { true }) {
            calls.state.withLock { $0.clockParticipant = participant }
        }
        syncRun = SendableWorkItem { calls.run(onClockThread: true) }
    }

    /// Queues a call with `time`; if a call is still waiting to start, it will carry this time instead.
    ///
    /// From a ``RealTimeClock`` tick (the player's wake-up runs on the clock thread) the
    /// call is made on the clock thread itself, with `queue` held as `sync` holds it, once
    /// the tick has left the player's queue: a tick then wakes one thread, not two. The
    /// main queue is always reached with `async`.
    func deliver(_ time: MediaTime) {
        guard schedule(time) else { return }
        if !isMainQueue, RealTimeClock.runAfterCurrentWork(self) { return }
        queue.async { [calls] in calls.run(onClockThread: false) }
    }

    /// ``deliver(_:)`` from a player's tick alone on the clock thread (``PlayerTick``), which
    /// makes the call itself (``runAfterClockWork()``) once it has let go of its mutex: true if
    /// it is to. A call to the main queue is queued here (false), as ``deliver(_:)`` queues it.
    func deliverFromTickAlone(_ time: MediaTime) -> Bool {
        guard schedule(time) else { return false }
        guard isMainQueue else { return true }
        queue.async { [calls] in calls.run(onClockThread: false) }
        return false
    }

    /// Records `time` for the next call; true if a call must be made for it (none waits yet,
    /// and the observer is not removed).
    private func schedule(_ time: MediaTime) -> Bool {
        calls.state.withLock { state in
            state.latest = time
            guard state.isActive && !state.isScheduled else { return false }
            state.isScheduled = true
            return true
        }
    }

    /// Clock thread, after the tick's work: makes the call holding `queue`.
    func runAfterClockWork() {
        queue.sync(execute: syncRun.item)
    }

    /// Clock thread, a call already scheduled (``deliverFromTickAlone(_:)``): made once the
    /// timer's work has returned (``RealTimeClock``'s follow-ups), or else on `queue`.
    func runAfterClockWorkOrLater() {
        if RealTimeClock.runAfterCurrentWork(self) { return }
        queue.async { [calls] in calls.run(onClockThread: false) }
    }

    /// Stops deliveries; waits for a call running on another thread to finish.
    func cancel() {
        let (mustWait, participant) = calls.state.withLock { state in
            let participant = state.clockParticipant
            state.clockParticipant = nil
            state.isActive = false
            guard let running = state.running, !running.isCallingThread else { return (false, participant) }
            state.cancelsWaiting += 1
            return (true, participant)
        }
        participant?.remove()
        if mustWait { calls.callReturned.wait() }
    }
}

/// A periodic observer's schedule, kept in the player's ``TimeObserverSchedule``.
struct PeriodicTimeObserver {
    let interval: MediaTime
    let delivery: TimeObserverDelivery
    /// The last time delivered, to avoid reporting the same instant twice.
    var lastDelivered: Double?

    /// How close to a tick a time counts as that tick (times are computed from frames and
    /// nanoseconds, so a tick's own time can come out a hair early).
    static let tolerance = 1e-7

    /// The first multiple of the interval more than ``tolerance`` after `seconds`: a time
    /// delivered within the tolerance before a tick counts as that tick, so the tick after it
    /// is always later than the tolerance (a wake-up for it never finds it due already).
    func tick(after seconds: Double) -> Double {
        let interval = self.interval.seconds
        let earliest = seconds + Self.tolerance
        var multiple = TickRounding.down(earliest / interval) + 1
        // The division can round a time just past a multiple down to it.
        if multiple * interval <= earliest { multiple += 1 }
        return multiple * interval
    }

    /// True if a call at `seconds` is due: past the last call, and at or past the tick after it.
    func isDue(at seconds: Double) -> Bool {
        guard let last = lastDelivered else { return true }
        return seconds > last && seconds + Self.tolerance >= tick(after: last)
    }
}

/// A boundary observer's times, kept in the player's ``TimeObserverSchedule``.
struct BoundaryTimeObserver {
    /// Seconds, ascending.
    let times: [Double]
    let delivery: TimeObserverDelivery
}
