import Dispatch
import Synchronization

/// What the render thread reports, in stream frames of a generation.
struct RenderEvent: Sendable {
    enum Kind: UInt8, Sendable {
        /// The item's first frame entered the stream at `streamFrame`.
        case started
        /// The item's last frame entered the stream; the next starts at `streamFrame`.
        case finished
        /// Decoding failed; the item's frames end at `streamFrame`. The error is on its `RenderItem`.
        case failed
        /// Everything written has played out; the render thread is idle.
        case drained
        /// A pause dropped the device buffer (no pause in place); the audible frame was `streamFrame`.
        case droppedOnPause
        /// The output cannot be opened; the render thread retries. Reported once per outage.
        case outputFailed
        /// The output failed under a write and what it held is lost: the audible frame was
        /// `streamFrame`. The render thread plays nothing until the player reloads from there.
        case outputLost
        /// The output opened again after ``outputFailed`` or ``outputLost``.
        case outputRestored
        /// The sink recovered from one or more underruns since the last such event
        /// (its ``AudioSink/underruns`` count moved); the stream went on.
        case underrunsRecovered
        /// A network item waits for its first bytes (nothing of it played yet): the output
        /// played out what it had. `streamFrame`: where the stream stands.
        case bufferingStarted
        /// A network item's buffer ran dry while it played: the output played out what it had.
        case stalled
        /// The network item that waited plays (on) again; its format is known.
        case bufferingEnded
        /// From `streamFrame` on, the item plays at `rate` (item frames per stream frame), its
        /// frame `itemFrame` heard there: the rate changed, the stretcher entered or left the
        /// path, or skipped silence made the item's time jump.
        case paced
    }

    var kind: Kind
    var generation: UInt64
    var renderID: UInt64
    var streamFrame: Int64
    /// ``Kind/paced``: the item's frame at `streamFrame`.
    var itemFrame: Int64 = 0
    /// ``Kind/started``, ``Kind/paced``: item frames per stream frame from `streamFrame` on.
    var rate: Double = 1
}

/// A single-producer, single-consumer ring of render events.
///
/// The render thread pushes without locks or allocation, then pokes a
/// Dispatch data source that runs the player's handler on its control queue.
/// Owner: no lock; one producer (the render thread) writes a slot, then `tail`, one consumer
/// (`queue`, checked in debug builds) reads a slot, then `head`; the atomics order the slots.
final class RenderEventRing: @unchecked Sendable {
    // Slots are written only by the producer before it publishes `tail`, and read
    // only by the consumer after it loads `tail`: the atomics order every access.
    private let capacity: Int
    private let slots: UnsafeMutablePointer<RenderEvent>
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)
    private let signal: any DispatchSourceUserDataAdd
    /// The consumer.
    private let queue: DispatchQueue

    /// Creates a ring whose consumer is `queue`; events are announced there once ``start(_:)``
    /// has given the handler (the player's needs the player, which needs the ring first).
    init(capacity: Int = 1024, queue: DispatchQueue) {
        self.capacity = capacity
        self.queue = queue
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: RenderEvent(kind: .drained, generation: 0, renderID: 0, streamFrame: 0), count: capacity)
        signal = DispatchSource.makeUserDataAddSource(queue: queue)
    }

    /// Creates a ring whose `handler` runs on `queue` after events arrive.
    convenience init(capacity: Int = 1024, queue: DispatchQueue, handler: @escaping @Sendable () -> Void) {
        self.init(capacity: capacity, queue: queue)
        start(handler)
    }

    /// Runs `handler` on the consumer's queue after events arrive, from now on. Call once,
    /// before the producer starts.
    func start(_ handler: @escaping @Sendable () -> Void) {
        signal.setEventHandler(handler: handler)
        signal.activate()
    }

    deinit {
        signal.cancel()
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    /// Render thread: appends an event. Waits (briefly) only if the consumer is a full ring behind.
    func push(_ event: RenderEvent) {
        let position = tail.load(ordering: .relaxed)
        while position - head.load(ordering: .acquiring) >= capacity {
            sched_yield()
        }
        slots[position % capacity] = event
        tail.store(position + 1, ordering: .releasing)
        signal.add(data: 1)
    }

    /// The consumer (`queue`): takes the oldest event, if any.
    func pop() -> RenderEvent? {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(queue))
        #endif
        let position = head.load(ordering: .relaxed)
        guard position < tail.load(ordering: .acquiring) else { return nil }
        let event = slots[position % capacity]
        head.store(position + 1, ordering: .releasing)
        return event
    }

    /// True when the consumer has taken every event.
    var isEmpty: Bool { head.load(ordering: .acquiring) == tail.load(ordering: .acquiring) }
}

#if canImport(Glibc)
import Glibc
#endif
