import Synchronization

/// What a playing player's tick works from, apart from the player: the share of the tick
/// with the control queue (``TickShare``, under ``share``), the stream's position as the tick
/// reads it, the render events it must not run ahead of, and the time it last reported.
///
/// The player's timer holds this strongly and the player not at all: a tick on the clock thread
/// reaches no weak reference (a weak load goes through the object's side table, one more
/// allocation's lines each tick) and nothing of the player it does not use. The player breaks the
/// cycle (this, its share, the timer, the timer's direct work) when it goes: ``retireTimer()``.
///
/// Owner: ``share``'s mutex for the share; `audibleFloor` is an atomic (see the player's
/// ``QueuePlayer/audibleTimeWhilePlaying(of:)``); the rest is set in `init`.
final class PlayerTick: Sendable {
    /// The observers' schedule, the wake-up timer and the span a tick may work alone from.
    let share = Mutex(TickShare())
    /// The stream's position: the render thread's measurement, brought forward by the device
    /// asked when that is half a period old, or a period (``DevicePosition``).
    let devicePosition: DevicePosition
    /// The render thread's events: while any wait for the control queue, a tick goes there.
    let events: RenderEventRing
    /// The last time reported for the span's item (a `Double`'s bits: the control queue's, or a
    /// tick alone's), which the time read beside the span never goes below. A tick that keeps
    /// the span stores only this, without a lock; a new span stores it under the player's
    /// `audibleSpan` lock, and readers load it under that lock: the time a reader pairs with a
    /// span is always one of that span's item. It is also the floor of a tick alone, which alone
    /// stores it while the share's span is published (the control queue stores it only after
    /// taking the tick back).
    let audibleFloor = Atomic<UInt64>(0)
    let clock: any PlaybackClock
    /// The calls a tick alone makes itself, once its mutex is let go: with ``RealTimeClock`` it
    /// runs on the clock thread, outside every queue, and holds the observer's queue for each
    /// call, as the clock thread's follow-ups do. Nil under another clock: there it runs on the
    /// control queue, whose calls go to the observers' queues with `async`
    /// (``TimeObserverDelivery/deliver(_:)``).
    private let calls: TickCalls?

    init(devicePosition: DevicePosition, events: RenderEventRing, clock: any PlaybackClock) {
        self.devicePosition = devicePosition
        self.events = events
        self.clock = clock
        calls = clock is RealTimeClock ? TickCalls() : nil
    }

    /// The clock thread's tick of a playing item, without the control queue (or, under a clock
    /// that runs its timers on the control queue, there), from the span it published with the
    /// timer (``TickShare``): the audible time, the periodic and boundary observers due (their
    /// calls made once the mutex is let go: ``TimeObserverDelivery``), and the deadline to set
    /// the timer for again, which the clock does (``DirectTimerWork``). Nil, having done nothing,
    /// when the control queue must look: no span (it took it back, or published none), the timer
    /// cancelled or set again since this deadline (`isCurrent`), render events waiting for it, or
    /// a time outside the span (the item ended, another generation, a stream not running). The
    /// device is asked as the control queue's tick would (``DevicePosition``), with the mutex
    /// held, so the control queue never sees half a tick.
    func alone(_ isCurrent: () -> Bool) -> UInt64? {
        // The calls due are made here once the mutex is let go (a block may call the player,
        // whose control queue takes the mutex): ``TickCalls``.
        let deadline = share.withLock { share -> UInt64? in
            // Render events waiting for the control queue (an item's end decoded, a stall) may
            // change the span: it looks at them first, as a tick used to wait behind them.
            guard let span = share.span, isCurrent(), events.isEmpty else { return nil }
            let (snapshot, now) = devicePosition.read(asking: share.timeObservers.deviceAsking, clock: clock)
            let floor = Double(bitPattern: audibleFloor.load(ordering: .relaxed))
            guard snapshot.sampleRate > 0, let seconds = span.seconds(in: snapshot, at: now, floor: floor) else { return nil }
            share.reportedAlone = true
            audibleFloor.store(seconds.bitPattern, ordering: .relaxed)
            let time = MediaTime(seconds: seconds)
            share.timeObservers.deliverDue(at: seconds, in: span.item) { [calls] delivery in
                guard let calls else { return delivery.deliver(time) }
                if delivery.deliverFromTickAlone(time), !calls.keep(delivery) {
                    // More calls due at once than slots: the rest after the tick, as any timer's work hands on.
                    delivery.runAfterClockWorkOrLater()
                }
            }
            let last = share.lastMeasurement.flatMap { $0.generation == span.generation ? (audible: $0.audible, at: $0.at) : nil }
            let hearing = Hearing(snapshot: snapshot, now: now, last: last)
            share.lastMeasurement = (span.generation, hearing.audibleAtMeasurement, snapshot.measuredAt)
            let deadline = hearing.wakeUp(start: span.start, end: span.end, itemStartFrame: span.itemStartFrame,
                                          sampleRate: span.sampleRate, rate: span.rate, seconds: seconds) { share.timeObservers.nextDue(at: $0) }
            return max(deadline, now)
        }
        calls?.makeAll()
        return deadline
    }

    /// The player goes: its timer is cancelled and let go (it holds this through its direct work).
    func retireTimer() {
        let timer = share.withLock { share -> (any ReusableTimer)? in
            defer { share.timer = nil; share.span = nil }
            return share.timer
        }
        timer?.cancel()
    }
}
