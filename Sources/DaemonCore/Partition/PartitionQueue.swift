import Dispatch

/// The partition's serial queue: the one owner of the ``Partition`` and of the parts that work
/// beside it (the status line, the state keeper, the location service, the expensive-command
/// gate, the watchdog's probe). Those parts are given this, not the partition: what they need
/// of it is where to run, and, each where it reads or changes what plays, a side of the
/// partition (``PartitionSides``).
///
/// Work queued here runs in order, one piece at a time; it does not catch the partition up
/// with the player first (``Partition/perform(_:)`` does, and so does every command:
/// ``CommandDispatcher``).
package struct PartitionQueue: Sendable {
    /// The dispatch queue itself, for the parts made with one (the idle events, the library's
    /// updater, the stickers, the channels).
    let dispatchQueue: DispatchQueue

    package init(_ dispatchQueue: DispatchQueue) {
        self.dispatchQueue = dispatchQueue
    }

    init(label: String) {
        self.init(DispatchQueue(label: label))
    }

    /// Runs `body` on the queue, after what was queued before it.
    package func async(_ body: @escaping @Sendable () -> Void) {
        dispatchQueue.async(execute: body)
    }

    /// Runs `body` on the queue and returns its result, suspending the caller (never blocking
    /// a thread).
    func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { (done: CheckedContinuation<Result, Never>) in
            dispatchQueue.async { done.resume(returning: body()) }
        }
    }

    /// A timer whose handler runs on the queue (the state keeper's saves, the status line's
    /// redraws).
    func makeTimer() -> any DispatchSourceTimer {
        DispatchSource.makeTimerSource(queue: dispatchQueue)
    }

    /// A box for `value` owned by the queue: every access asserts the queue.
    func bound<Value>(_ value: Value) -> QueueBound<Value> {
        QueueBound(value, on: dispatchQueue)
    }

    /// Stops at once (`dispatchPrecondition`) when called anywhere but on the queue.
    package func assertOwned() {
        dispatchPrecondition(condition: .onQueue(dispatchQueue))
    }
}
