/// A player's periodic and boundary time observers: what is due at a time of the current
/// item, and when the next call is due.
///
/// A value kept under the player's `tick` mutex (``TickShare``), which its control queue and
/// the clock thread's tick alone take. Its state is private so the rules live in one place: a periodic observer
/// is called at each multiple of its interval once, counting from the start of each item; a
/// boundary observer when normal playback crosses one of its times (never for a jump). The
/// per-tick methods (``deliverDue(at:in:)``, ``nextDue(at:)``) walk the observers in place
/// and allocate nothing.
///
/// The observers are kept in arrays, in the order they were added, not in dictionaries by id:
/// a player has a few, a tick walks them all a hundred times a second, and an array is one
/// block read in order, where a dictionary's walk reads its bitmap, keys and values apart and
/// checks its storage is unique before each update in place. Removing one (rare) searches.
/// They are walked by index, not with `for … in`: unspecialised (a debug build), an array's
/// iterator reads each element through a coroutine whose frame is allocated.
struct TimeObserverSchedule {
    private var periodic: [Entry<PeriodicTimeObserver>] = []
    private var boundary: [Entry<BoundaryTimeObserver>] = []
    /// How far normal playback has been checked against the boundary times, in which item.
    private var boundaryCheckedUpTo: (item: PlayerItem, seconds: Double)?
    private var lastID: UInt64 = 0

    /// An observer and the id its token removes it by.
    private struct Entry<Observer> {
        let id: UInt64
        var observer: Observer
    }

    /// How often a wake-up asks the device how far it has played (``DevicePosition``): every
    /// half period while a periodic observer is set, whose ticks must follow a device that stands
    /// still; once a period otherwise.
    var deviceAsking: DevicePosition.Asking { periodic.isEmpty ? .oncePerPeriod : .everyHalfPeriod }

    /// Adds a periodic observer; returns its id.
    mutating func addPeriodic(interval: MediaTime, delivery: TimeObserverDelivery) -> UInt64 {
        lastID += 1
        periodic.append(Entry(id: lastID, observer: PeriodicTimeObserver(interval: interval, delivery: delivery)))
        return lastID
    }

    /// Adds a boundary observer for `times` (seconds, any order); returns its id.
    mutating func addBoundary(times: [Double], delivery: TimeObserverDelivery) -> UInt64 {
        lastID += 1
        boundary.append(Entry(id: lastID, observer: BoundaryTimeObserver(times: times.sorted(), delivery: delivery)))
        return lastID
    }

    /// Removes an observer; returns its delivery (to cancel outside the control queue), or nil
    /// if there is none by that id.
    mutating func remove(id: UInt64) -> TimeObserverDelivery? {
        if let index = periodic.firstIndex(where: { $0.id == id }) {
            return periodic.remove(at: index).observer.delivery
        }
        if let index = boundary.firstIndex(where: { $0.id == id }) {
            return boundary.remove(at: index).observer.delivery
        }
        return nil
    }

    /// A new current item is a new timeline: periodic observers count their ticks from its start.
    mutating func restartTicks() {
        for index in periodic.indices {
            periodic[index].observer.lastDelivered = nil
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
        for index in periodic.indices where periodic[index].observer.lastDelivered != seconds {
            periodic[index].observer.delivery.deliver(MediaTime(seconds: seconds))
            periodic[index].observer.lastDelivered = seconds
        }
        boundaryCheckedUpTo = item.map { ($0, seconds) }
    }

    /// A tick at `seconds` of `item` while playing: calls the periodic observers whose tick
    /// has come and the boundary observers whose time normal playback has crossed since the
    /// last check.
    mutating func deliverDue(at seconds: Double, in item: PlayerItem) {
        let time = MediaTime(seconds: seconds)
        deliverDue(at: seconds, in: item) { $0.deliver(time) }
    }

    /// ``deliverDue(at:in:)``, each delivery due handed to `deliver` (which delivers
    /// `MediaTime(seconds: seconds)`): a tick alone makes the calls itself.
    mutating func deliverDue(at seconds: Double, in item: PlayerItem, through deliver: (TimeObserverDelivery) -> Void) {
        var index = 0
        while index < periodic.count {
            if periodic[index].observer.isDue(at: seconds) {
                deliver(periodic[index].observer.delivery)
                periodic[index].observer.lastDelivered = seconds
            }
            index += 1
        }
        guard !boundary.isEmpty else {
            boundaryCheckedUpTo = (item, seconds)
            return
        }
        let previous = boundaryCheckedUpTo?.item == item ? boundaryCheckedUpTo!.seconds : seconds
        for index in boundary.indices where boundary[index].observer.times.contains(where: { $0 > previous && $0 <= seconds + PeriodicTimeObserver.tolerance }) {
            deliver(boundary[index].observer.delivery)
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
        for index in periodic.indices {
            var next = seconds
            if let last = periodic[index].observer.lastDelivered { next = periodic[index].observer.tick(after: last) }
            earliest = min(earliest ?? next, next)
        }
        for index in boundary.indices {
            if let next = boundary[index].observer.times.first(where: { $0 > seconds + PeriodicTimeObserver.tolerance }) {
                earliest = min(earliest ?? next, next)
            }
        }
        return earliest
    }
}
