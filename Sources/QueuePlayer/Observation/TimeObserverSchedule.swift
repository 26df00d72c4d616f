/// A player's periodic and boundary time observers: what is due at a time of the current
/// item, and when the next call is due.
///
/// A value kept under the player's `tick` mutex (``TickShare``), which its control queue and
/// the clock thread's tick alone take. Its state is private so the rules live in one place: a periodic observer
/// is called at each multiple of its interval once, counting from the start of each item; a
/// boundary observer when normal playback crosses one of its times (never for a jump). The
/// per-tick methods (``deliverDue(at:in:)``, ``nextDue(at:)``) walk the observers in place
/// and allocate nothing.
struct TimeObserverSchedule {
    private var periodic: [UInt64: PeriodicTimeObserver] = [:]
    private var boundary: [UInt64: BoundaryTimeObserver] = [:]
    /// How far normal playback has been checked against the boundary times, in which item.
    private var boundaryCheckedUpTo: (item: PlayerItem, seconds: Double)?
    private var lastID: UInt64 = 0
    /// How often a wake-up asks the device how far it has played (``DevicePosition``): every
    /// half period while a periodic observer is set, whose ticks must follow a device that stands
    /// still; once a period otherwise.
    var deviceAsking: DevicePosition.Asking { periodic.isEmpty ? .oncePerPeriod : .everyHalfPeriod }

    /// Adds a periodic observer; returns its id.
    mutating func addPeriodic(interval: MediaTime, delivery: TimeObserverDelivery) -> UInt64 {
        lastID += 1
        periodic[lastID] = PeriodicTimeObserver(interval: interval, delivery: delivery)
        return lastID
    }

    /// Adds a boundary observer for `times` (seconds, any order); returns its id.
    mutating func addBoundary(times: [Double], delivery: TimeObserverDelivery) -> UInt64 {
        lastID += 1
        boundary[lastID] = BoundaryTimeObserver(times: times.sorted(), delivery: delivery)
        return lastID
    }

    /// Removes an observer; returns its delivery (to cancel outside the control queue), or nil
    /// if there is none by that id.
    mutating func remove(id: UInt64) -> TimeObserverDelivery? {
        if let removed = periodic.removeValue(forKey: id) {
            return removed.delivery
        }
        return boundary.removeValue(forKey: id)?.delivery
    }

    /// A new current item is a new timeline: periodic observers count their ticks from its start.
    mutating func restartTicks() {
        // Walked by index and updated in place: mutating the dictionary while a `for` loop
        // holds it would copy its storage.
        var index = periodic.startIndex
        while index != periodic.endIndex {
            periodic.values[index].lastDelivered = nil
            periodic.formIndex(after: &index)
        }
    }

    /// Time jumps (a new generation): no boundary is crossed by it.
    mutating func forgetBoundaryProgress() {
        boundaryCheckedUpTo = nil
    }

    /// The "extra" call: every periodic observer gets `seconds` now (playback started or
    /// stopped, or time jumped), unless it already got exactly this time; boundary times up
    /// to here count as passed.
    mutating func deliverToAll(at seconds: Double, in item: PlayerItem?) {
        var index = periodic.startIndex
        while index != periodic.endIndex {
            let observer = periodic.values[index]
            if observer.lastDelivered != seconds {
                observer.delivery.deliver(MediaTime(seconds: seconds))
                periodic.values[index].lastDelivered = seconds
            }
            periodic.formIndex(after: &index)
        }
        boundaryCheckedUpTo = item.map { ($0, seconds) }
    }

    /// A tick at `seconds` of `item` while playing: calls the periodic observers whose tick
    /// has come and the boundary observers whose time normal playback has crossed since the
    /// last check.
    mutating func deliverDue(at seconds: Double, in item: PlayerItem) {
        var index = periodic.startIndex
        while index != periodic.endIndex {
            let observer = periodic.values[index]
            if observer.isDue(at: seconds) {
                observer.delivery.deliver(MediaTime(seconds: seconds))
                periodic.values[index].lastDelivered = seconds
            }
            periodic.formIndex(after: &index)
        }
        let previous = boundaryCheckedUpTo?.item == item ? boundaryCheckedUpTo!.seconds : seconds
        for observer in boundary.values where observer.times.contains(where: { $0 > previous && $0 <= seconds + PeriodicTimeObserver.tolerance }) {
            observer.delivery.deliver(MediaTime(seconds: seconds))
        }
        boundaryCheckedUpTo = (item, seconds)
    }

    /// The earliest item time (seconds) at which a call is due, seen from `seconds`; nil if none.
    ///
    /// A periodic observer is due at the tick after its last call, not after now: a tick whose
    /// time has passed without its call (the position ran ahead of the timer set for it) is
    /// due at once, never skipped; with no call yet on this item's timeline, the first is due now.
    func nextDue(at seconds: Double) -> Double? {
        var earliest: Double?
        for observer in periodic.values {
            var next = seconds
            if let last = observer.lastDelivered { next = observer.tick(after: last) }
            earliest = min(earliest ?? next, next)
        }
        for observer in boundary.values {
            if let next = observer.times.first(where: { $0 > seconds + PeriodicTimeObserver.tolerance }) {
                earliest = min(earliest ?? next, next)
            }
        }
        return earliest
    }
}
