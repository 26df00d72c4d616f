import Dispatch

/// A `DispatchWorkItem` made once and run again and again, from any thread, without making a
/// block each time (a tick's way into a queue: ``RealTimeClock``'s timers, the time observers).
///
/// Owner: none needed: the item is immutable once made and libdispatch runs it from any thread
/// (swift-corelibs-libdispatch does not mark `DispatchWorkItem` `Sendable`).
struct SendableWorkItem: @unchecked Sendable {
    let item: DispatchWorkItem

    init(_ work: @escaping @Sendable () -> Void) {
        item = DispatchWorkItem(block: work)
    }
}
