/// The time observers' calls a tick alone found due (``PlayerTick/alone(_:)``), kept from the
/// moment it finds them, under the share's mutex, to the moment it makes them, the mutex let go.
///
/// A few slots made once, not a list made per tick: `InlineArray`'s subscript, unspecialised in a
/// debug build, allocated each tick (`TickAllocationTests`), and the clock thread's own list of
/// work to run after a timer's (``RealTimeClock``) is a shared object behind a lazy global. Past
/// ``capacity`` calls in one tick, the rest go that way (``TimeObserverDelivery/deliver(_:)``).
///
/// `@unchecked Sendable`: the slots belong to the clock thread, the one thread that runs the
/// player's timer and so its ticks alone, one deadline at a time (``RealTimeClock``); debug
/// builds check each use against the thread that made the first (``ThreadOwner``).
final class TickCalls: @unchecked Sendable {
    static let capacity = 4
    /// Retained deliveries, `slots[0..<count.pointee]`.
    private let slots = UnsafeMutablePointer<Unmanaged<TimeObserverDelivery>>.allocate(capacity: TickCalls.capacity)
    /// Behind a pointer: a class's stored `var` is checked for exclusive access at each use.
    private let count: UnsafeMutablePointer<Int> = {
        let count = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        count.initialize(to: 0)
        return count
    }()
    private let owner = ThreadOwner()

    deinit {
        for index in 0..<count.pointee { slots[index].release() }
        slots.deallocate()
        count.deallocate()
    }

    /// Keeps `delivery` for ``makeAll()``; false, keeping nothing, when the slots are full.
    func keep(_ delivery: TimeObserverDelivery) -> Bool {
        owner.check("a tick's observer calls")
        guard count.pointee < Self.capacity else { return false }
        slots[count.pointee] = Unmanaged.passRetained(delivery)
        count.pointee += 1
        return true
    }

    /// Makes the calls kept, in the order they were kept, each holding its observer's queue
    /// (``TimeObserverDelivery/runAfterClockWork()``), and lets them go.
    func makeAll() {
        owner.check("a tick's observer calls")
        owner.claim()
        var index = 0
        while index < count.pointee {
            let delivery = slots[index].takeRetainedValue()
            delivery.runAfterClockWork()
            index += 1
        }
        count.pointee = 0
    }
}
