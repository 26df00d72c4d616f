import Dispatch
import Foundation

extension QueuePlayer {
    /// Calls `block` with the audible time of the current item every `interval`
    /// while playing, on `queue` (the main queue when nil; it should be serial).
    ///
    /// Besides the ticks at each multiple of `interval`, the block is called
    /// when playback starts or stops and when time jumps (a seek, a new current
    /// item). A block that falls behind is not queued up: the late call
    /// carries the latest time instead. With the real-time clock a tick's block
    /// runs on the clock thread while holding `queue` (as `sync` would), so it
    /// should be short: a slow block delays the next ticks of every player.
    public func addPeriodicTimeObserver(forInterval interval: MediaTime, queue: DispatchQueue?,
                                        using block: @escaping @Sendable (MediaTime) -> Void) -> TimeObserverToken {
        precondition(interval.value > 0, "the interval of a periodic time observer must be positive")
        return onControlQueue {
            let delivery = TimeObserverDelivery(queue: queue ?? .main, clock: clock, block: block)
            let id = timeObservers.addPeriodic(interval: interval, delivery: delivery)
            scheduleWakeUp()
            return TimeObserverToken(id: id, player: self)
        }
    }

    /// Calls `block` on `queue` each time normal playback crosses one of `times`
    /// in the current item (not when a seek jumps over it).
    public func addBoundaryTimeObserver(forTimes times: [MediaTime], queue: DispatchQueue?,
                                        using block: @escaping @Sendable () -> Void) -> TimeObserverToken {
        onControlQueue {
            let delivery = TimeObserverDelivery(queue: queue ?? .main, clock: clock) { _ in block() }
            let id = timeObservers.addBoundary(times: times.map(\.seconds), delivery: delivery)
            scheduleWakeUp()
            return TimeObserverToken(id: id, player: self)
        }
    }

    /// Removes a time observer. Once this returns no new call of its block
    /// starts (a call already running on another thread is waited for).
    /// Removing twice, or a token of another player, does nothing.
    public func removeTimeObserver(_ token: TimeObserverToken) {
        removeTimeObserver(id: token.id, ifOwnedBy: token)
    }

    func removeTimeObserver(id: UInt64, ifOwnedBy token: TimeObserverToken? = nil) {
        let delivery: TimeObserverDelivery? = onControlQueue {
            if let token, !token.belongs(to: self) { return nil }
            return timeObservers.remove(id: id)
        }
        // Outside the control queue: waiting for a running block must not hold up the player.
        delivery?.cancel()
    }

    // MARK: - Delivery

    /// The "extra" call: every periodic observer gets the current time now (playback
    /// started or stopped, or time jumped), unless it already got exactly this time.
    func deliverToAllPeriodicObservers(at seconds: Double? = nil) {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        guard let seconds = seconds ?? audiblePosition() else { return }
        timeObservers.deliverToAll(at: seconds, in: currentItem)
    }

    /// Fires what is due and schedules the next wake-up, all from one reading of the position
    /// (a second one if an item entered or ended meanwhile: what that ran may have changed the queue).
    func wakeUpFired() {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        var reading = readPosition()
        if updateTimeline(reading) { reading = readPosition() }
        if rate != 0, !timeline.isHeldAtEnd, let item = currentItem, let seconds = audiblePosition(reading) {
            timeObservers.deliverDue(at: seconds, in: item)
        }
        scheduleWakeUp(reading)
    }

    /// Schedules one timer for the earliest of: the next item boundary, the next
    /// periodic tick, the next boundary time (``Timeline/nextWakeUp(of:in:at:nextDue:)``).
    /// While the stream position is not yet known the player polls briefly instead. From
    /// `reading` if given (read now if nil).
    func scheduleWakeUp(_ reading: PositionReading? = nil) {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        wakeUp.cancel()
        // While the output is unavailable time stands still: its return (a render event) reschedules.
        guard rate != 0, let item = currentItem, !timeline.isHeldAtEnd, !outputUnavailable else { return }
        let reading = reading ?? readPosition()
        let deadline = timeline.nextWakeUp(of: item, in: reading.position, at: reading.now) { timeObservers.nextDue(at: $0) }
        wakeUp.schedule(at: max(deadline, reading.now))
    }
}

extension TimeObserverToken {
    func belongs(to player: QueuePlayer) -> Bool { owner === player }
}
