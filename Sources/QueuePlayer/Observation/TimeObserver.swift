import Dispatch
import Foundation

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
final class TimeObserverDelivery: @unchecked Sendable {
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var isActive = true
    private var isScheduled = false
    private var latest: MediaTime = .zero
    private var runningThread: pthread_t?

    let queue: DispatchQueue
    private let block: @Sendable (MediaTime) -> Void
    private var virtualClockKey: (clock: VirtualClock, key: UInt64)?

    init(queue: DispatchQueue, clock: any PlaybackClock, block: @escaping @Sendable (MediaTime) -> Void) {
        self.queue = queue
        self.block = block
        if let virtual = clock as? VirtualClock {
            // Under a virtual clock time waits for the block, so no tick is coalesced by chance.
            virtualClockKey = (virtual, virtual.addParticipant(settle: { queue.sync {} }, isQuiescent: { true }))
        }
    }

    /// Queues a call with `time`; if a call is still waiting to start, it will carry this time instead.
    ///
    /// From a ``RealTimeClock`` tick (the player's wake-up runs on the clock thread) the
    /// call is made on the clock thread itself, with `queue` held as `sync` holds it, once
    /// the tick has left the player's queue: a tick then wakes one thread, not two. The
    /// main queue is always reached with `async`.
    func deliver(_ time: MediaTime) {
        condition.lock()
        latest = time
        let needsDispatch = isActive && !isScheduled
        if needsDispatch { isScheduled = true }
        condition.unlock()
        guard needsDispatch else { return }
        if queue !== DispatchQueue.main, RealTimeClock.runAfterCurrentWork({ [self] in queue.sync { run() } }) { return }
        queue.async { [self] in run() }
    }

    /// Makes the waiting call, on `queue`.
    private func run() {
        condition.lock()
        isScheduled = false
        guard isActive else {
            condition.unlock()
            return
        }
        let time = latest
        runningThread = pthread_self()
        condition.unlock()
        block(time)
        condition.lock()
        runningThread = nil
        condition.broadcast()
        condition.unlock()
    }

    /// Stops deliveries; waits for a call running on another thread to finish.
    func cancel() {
        condition.lock()
        if let (clock, key) = virtualClockKey { clock.removeParticipant(key) }
        virtualClockKey = nil
        isActive = false
        while let running = runningThread, pthread_equal(running, pthread_self()) == 0 {
            condition.wait()
        }
        condition.unlock()
    }
}

/// A periodic observer's schedule, kept on the player's control queue.
struct PeriodicTimeObserver {
    let interval: MediaTime
    let delivery: TimeObserverDelivery
    /// The last time delivered, to avoid reporting the same instant twice.
    var lastDelivered: Double?
}

/// A boundary observer's times, kept on the player's control queue.
struct BoundaryTimeObserver {
    /// Seconds, ascending.
    let times: [Double]
    let delivery: TimeObserverDelivery
}
