import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The bounded buffer between a network transport (the producer, off the render thread) and
/// a stream's decoder (the consumer, on the render thread): a single-producer, single-consumer
/// ring of bytes whose every shared word is an atomic, so the render thread never takes a lock,
/// never allocates and never waits on the network through it.
///
/// Besides the bytes it carries what the two sides must tell each other:
/// - the end of the data, or a failure (the producer's; the error is written before the state
///   that announces it, so the consumer reads it after an acquiring load of that state);
/// - a restart (the consumer's: a seek's byte offset, or the live edge after a pause longer
///   than the buffer): the consumer bumps the requested epoch; the producer, when it has
///   switched its connection, records where in the ring the new epoch's bytes begin and
///   acknowledges it; until then the consumer reads nothing, and then it skips to that point;
/// - wake-ups both ways, each given only to a side that said it waits (an atomic flag), so a
///   busy stream costs no signal per chunk: the consumer's through the closure its player sets
///   (``setConsumerWakeUp(_:)``: the render thread's mailbox), the producer's through a
///   Dispatch source, which the render thread may signal (as it does the player's event ring).
///
/// Owner: the storage's bytes between `head` and `tail` belong to the consumer, the rest to
/// the producer; `head`, `requestedEpoch`, `requestedOffset` and `consumerWaiting` are written
/// by the consumer only, `tail`, `state`, `failure`, `epochStart`, `acknowledgedEpoch` and
/// `fullSince` by the producer only (each side's calls say which they are). One thread at a
/// time is each side; the atomics order every access. Debug builds check the sides at run
/// time: each side's call marks the side busy while it runs and stops the program if it
/// already was (``asConsumer(_:)``, ``asProducer(_:)``).
public final class StreamBuffer: @unchecked Sendable {
    /// The ring's size in bytes (a power of two).
    public let capacity: Int
    private let storage: UnsafeMutableRawPointer
    /// Bytes consumed (or skipped) since the start: the consumer's.
    private let head = Atomic<Int>(0)
    /// Bytes produced since the start: the producer's.
    private let tail = Atomic<Int>(0)

    private enum DataState: UInt8 { case flowing, ended, failed }
    private let state = Atomic<UInt8>(DataState.flowing.rawValue)
    /// Written by the producer before `state` becomes `.failed`.
    private var failure: DecoderError?

    private let requestedEpoch = Atomic<Int>(0)
    /// The byte offset of the requested restart, -1 for the live edge.
    private let requestedOffset = Atomic<Int64>(0)
    private let acknowledgedEpoch = Atomic<Int>(0)
    /// The ring position where the acknowledged epoch's bytes begin.
    private let epochStart = Atomic<Int>(0)

    private let consumerWaiting = Atomic<Bool>(false)
    private let producerWaiting = Atomic<Bool>(false)
    /// Set by the player before the consumer first waits; read by the producer only.
    private let consumerWakeUp = Mutex<(@Sendable () -> Void)?>(nil)
    private let producerSignal: any DispatchSourceUserDataAdd

    /// When the producer found the ring full and began to wait for room (CLOCK_MONOTONIC
    /// nanoseconds), 0 while it has room: how stale the oldest buffered bytes of a live stream are.
    private let fullSince = Atomic<UInt64>(0)
    /// The stream's bytes per second, as the decoder learns it from the frames (0: unknown).
    private let bytesPerSecondValue = Atomic<Int>(0)
    /// How much of the ring the producer fills: all of it, or less for a preferred forward
    /// buffer duration (``setPreferredForwardDuration(_:)``).
    private let fillLimit: Atomic<Int>
    private let preferredForwardMilliseconds = Atomic<Int>(0)
    /// The bytes buffered at which a waiting consumer is woken.
    private let consumerThreshold = Atomic<Int>(1)
    /// The resource's length in bytes as the response said (-1: not known, or live).
    private let resourceLengthValue = Atomic<Int64>(-1)
    private let isLiveValue = Atomic<Bool>(false)
    /// The item frame the consumer decoded last, and its sample rate (for ``loadedSeconds``).
    private let decodedFrame = Atomic<Int64>(0)
    private let decodedRate = Atomic<Int>(0)
    /// A consumer's call is running (set in debug builds only: the owner check).
    private let consumerBusy = Atomic<Bool>(false)
    /// A producer's call is running (set in debug builds only: the owner check).
    private let producerBusy = Atomic<Bool>(false)

    /// A ring of `capacity` bytes (rounded up to a power of two); the producer's wake-ups run
    /// on `producerQueue` once ``setProducerWakeUp(_:)`` gave their handler.
    public init(capacity: Int, producerQueue: DispatchQueue) {
        var size = 4096
        while size < capacity { size <<= 1 }
        self.capacity = size
        fillLimit = Atomic(size)
        storage = .allocate(byteCount: size, alignment: 16)
        producerSignal = DispatchSource.makeUserDataAddSource(queue: producerQueue)
    }

    deinit {
        producerSignal.setEventHandler(handler: nil)
        producerSignal.activate()
        producerSignal.cancel()
        storage.deallocate()
    }

    // MARK: - Shared figures (any thread)

    /// Bytes buffered for the consumer now (those of a restart not yet made count nothing).
    public var bufferedBytes: Int {
        guard requestedEpoch.load(ordering: .acquiring) == acknowledgedEpoch.load(ordering: .acquiring) else { return 0 }
        let start = max(head.load(ordering: .acquiring), epochStart.load(ordering: .acquiring))
        return max(0, tail.load(ordering: .acquiring) - start)
    }

    /// Room for the producer now (within the fill limit).
    public var freeBytes: Int { fillLimit.load(ordering: .relaxed) - (tail.load(ordering: .acquiring) - head.load(ordering: .acquiring)) }

    /// The room a waiting producer is woken for: 16 KiB (a second of 128 kbit/s, so a live
    /// stream's titles are announced within about that of their audio), less for a small fill limit.
    public var wakeRoom: Int { min(fillLimit.load(ordering: .relaxed) / 8, 16 * 1024) }

    /// True when the producer would wait for room: the buffer holds all it may.
    public var isFull: Bool { freeBytes < wakeRoom }

    /// The resource's length in bytes, when the response said it (nil for a live stream).
    public var resourceLength: Int64? {
        let length = resourceLengthValue.load(ordering: .acquiring)
        return length < 0 ? nil : length
    }

    /// True for a live stream (no length, or ICY metadata): nothing to seek in, and a
    /// reconnection plays on from the live edge.
    public var isLive: Bool { isLiveValue.load(ordering: .acquiring) }

    /// The span of the item buffered ahead, in seconds: from the frame decoded last to the
    /// end of what the ring holds (at ``bytesPerSecond``).
    public var loadedSeconds: (start: Double, duration: Double) {
        let rate = decodedRate.load(ordering: .relaxed)
        let start = rate > 0 ? Double(decodedFrame.load(ordering: .relaxed)) / Double(rate) : 0
        return (start, bufferedSeconds)
    }

    /// The preferred forward buffer duration in seconds (0: as much as the ring holds).
    public var preferredForwardDuration: Double { Double(preferredForwardMilliseconds.load(ordering: .relaxed)) / 1000 }

    /// Limits the buffering ahead to `seconds` of audio (0: the whole ring), once the byte rate is known.
    public func setPreferredForwardDuration(_ seconds: Double) {
        preferredForwardMilliseconds.store(max(0, Int((seconds * 1000).rounded())), ordering: .relaxed)
        updateFillLimit()
    }

    private func updateFillLimit() {
        let rate = bytesPerSecond
        let preferred = preferredForwardMilliseconds.load(ordering: .relaxed)
        let limit = preferred > 0 && rate > 0 ? min(capacity, max(16 * 1024, rate * preferred / 1000)) : capacity
        fillLimit.store(limit, ordering: .relaxed)
        wakeProducer()
    }

    /// True once the producer said the data ends (all of it is in the ring or consumed).
    public var hasEnded: Bool {
        requestedEpoch.load(ordering: .acquiring) == acknowledgedEpoch.load(ordering: .acquiring)
            && state.load(ordering: .acquiring) == DataState.ended.rawValue
    }

    /// The producer's failure, once announced.
    public var error: DecoderError? {
        guard state.load(ordering: .acquiring) == DataState.failed.rawValue else { return nil }
        return failure
    }

    /// The stream's bytes per second (from its frames), 0 until known.
    public var bytesPerSecond: Int { bytesPerSecondValue.load(ordering: .relaxed) }

    /// Seconds of audio in the ring, at ``bytesPerSecond`` (0 while that is unknown).
    public var bufferedSeconds: Double {
        let rate = bytesPerSecond
        return rate > 0 ? Double(bufferedBytes) / Double(rate) : 0
    }

    /// Total bytes consumed (the position of the next byte the decoder reads, in ring terms).
    public var consumedBytes: Int { head.load(ordering: .acquiring) }

    /// Total bytes produced.
    public var producedBytes: Int { tail.load(ordering: .acquiring) }

    /// Nanoseconds (CLOCK_MONOTONIC) since the ring has been full with the producer waiting; 0 if it is not.
    public func fullFor(now: UInt64 = StreamBuffer.monotonicNow()) -> UInt64 {
        let since = fullSince.load(ordering: .acquiring)
        return since == 0 || now < since ? 0 : now - since
    }

    // MARK: - Consumer (the decoder's thread)

    /// Copies up to `count` buffered bytes into `destination`; 0 when none is buffered (see
    /// ``hasEnded`` and ``error``). No lock, no allocation.
    public func read(into destination: UnsafeMutableRawPointer, count: Int) -> Int {
        asConsumer {
            guard requestedEpoch.load(ordering: .relaxed) == acknowledgedEpoch.load(ordering: .acquiring) else { return 0 }
            var position = head.load(ordering: .relaxed)
            let start = epochStart.load(ordering: .relaxed)
            if position < start {
                position = start
                head.store(position, ordering: .releasing)
            }
            let available = tail.load(ordering: .acquiring) - position
            let taken = min(available, count)
            guard taken > 0 else { return 0 }
            let index = position & (capacity - 1)
            let first = min(taken, capacity - index)
            destination.copyMemory(from: storage + index, byteCount: first)
            if first < taken { (destination + first).copyMemory(from: storage, byteCount: taken - first) }
            head.store(position + taken, ordering: .releasing)
            // Wakes a producer that waits for room once a useful amount of it is free.
            if freeBytes >= wakeRoom { wakeProducer() }
            return taken
        }
    }

    /// Drops every byte buffered now (a live stream's stale audio).
    public func discardBuffered() {
        asConsumer {
            head.store(max(head.load(ordering: .relaxed), tail.load(ordering: .acquiring)), ordering: .releasing)
            wakeProducer()
        }
    }

    /// Asks the producer to deliver from byte `offset` of the resource, or from the live edge
    /// when nil; nothing is read until it has. Lock-free: the render thread may call it.
    public func requestRestart(at offset: Int64?) {
        asConsumer {
            requestedOffset.store(offset ?? -1, ordering: .relaxed)
            requestedEpoch.add(1, ordering: .releasing)
            wakeProducer()
        }
    }

    /// The consumer is about to wait for data: once `bytes` are buffered (or the data ends,
    /// fails, or the ring is full) the producer calls the consumer's wake-up. Returns false
    /// if that is so already, so the caller need not wait.
    public func consumerWillWait(forBytes bytes: Int = 1) -> Bool {
        asConsumer {
            consumerThreshold.store(max(1, bytes), ordering: .relaxed)
            consumerWaiting.store(true, ordering: .sequentiallyConsistent)
            if consumerMayGoOn {
                consumerWaiting.store(false, ordering: .relaxed)
                return false
            }
            return true
        }
    }

    private var consumerMayGoOn: Bool {
        bufferedBytes >= consumerThreshold.load(ordering: .relaxed) || isFull || hasEnded || error != nil
    }

    /// Records the stream's byte rate, learnt from its frames.
    public func setBytesPerSecond(_ rate: Int) {
        asConsumer {
            guard rate != bytesPerSecondValue.load(ordering: .relaxed) else { return }
            bytesPerSecondValue.store(rate, ordering: .relaxed)
            updateFillLimit()
        }
    }

    /// Records the item frame decoded last (for ``loadedSeconds``).
    public func setDecodedFrame(_ frame: Int64, sampleRate: Int) {
        asConsumer {
            decodedFrame.store(frame, ordering: .relaxed)
            decodedRate.store(sampleRate, ordering: .relaxed)
        }
    }

    private func wakeProducer() {
        if producerWaiting.load(ordering: .acquiring), producerWaiting.exchange(false, ordering: .acquiringAndReleasing) {
            producerSignal.add(data: 1)
        }
    }

    // MARK: - Producer (the transport's side)

    /// Sets what wakes the consumer when it waits (the player's render thread); call before
    /// the decoder is handed to it.
    public func setConsumerWakeUp(_ wakeUp: @escaping @Sendable () -> Void) {
        consumerWakeUp.withLock { $0 = wakeUp }
    }

    /// Sets the handler the consumer's wake-ups run (on the producer's queue); call once, first.
    public func setProducerWakeUp(_ handler: @escaping @Sendable () -> Void) {
        producerSignal.setEventHandler(handler: handler)
        producerSignal.activate()
    }

    /// Says what the response's head said: the resource's length (nil: unknown) and whether it
    /// is a live stream. Before the first byte of it is written.
    public func describe(length: Int64?, isLive: Bool) {
        asProducer {
            resourceLengthValue.store(length ?? -1, ordering: .releasing)
            isLiveValue.store(isLive, ordering: .releasing)
        }
    }

    /// Appends up to `bytes.count` bytes; returns how many fitted.
    @discardableResult
    public func write(_ bytes: UnsafeRawBufferPointer) -> Int {
        asProducer {
            let position = tail.load(ordering: .relaxed)
            let room = fillLimit.load(ordering: .relaxed) - (position - head.load(ordering: .acquiring))
            let taken = min(room, bytes.count)
            guard taken > 0, let base = bytes.baseAddress else { return 0 }
            let index = position & (capacity - 1)
            let first = min(taken, capacity - index)
            (storage + index).copyMemory(from: base, byteCount: first)
            if first < taken { storage.copyMemory(from: base + first, byteCount: taken - first) }
            tail.store(position + taken, ordering: .releasing)
            wakeConsumer()
            return taken
        }
    }

    /// The producer will wait for room (or a restart): the consumer's next read that frees
    /// ``wakeRoom``, or its restart request, runs the producer's wake-up. Returns false if
    /// there is room (or a restart) already, so the caller need not wait.
    public func producerWillWait(forRoom room: Int) -> Bool {
        asProducer {
            producerWaiting.store(true, ordering: .sequentiallyConsistent)
            if freeBytes >= min(room, wakeRoom) || restartRequest != nil {
                producerWaiting.store(false, ordering: .relaxed)
                return false
            }
            if fullSince.load(ordering: .relaxed) == 0 { fullSince.store(Self.monotonicNow(), ordering: .releasing) }
            return true
        }
    }

    /// The producer will wait for a restart request only (its data ended or failed): the
    /// consumer's request, or its reads, wake it. False if a restart is asked for already.
    public func producerWillWaitForRestart() -> Bool {
        asProducer {
            producerWaiting.store(true, ordering: .sequentiallyConsistent)
            if restartRequest != nil {
                producerWaiting.store(false, ordering: .relaxed)
                return false
            }
            return true
        }
    }

    /// The ring has room again (the producer stopped waiting for it).
    public func producerHasRoom() {
        asProducer {
            fullSince.store(0, ordering: .releasing)
        }
    }

    /// The restart the consumer asks for and not yet made: the epoch and the byte offset (nil: the live edge).
    public var restartRequest: (epoch: Int, offset: Int64?)? {
        let epoch = requestedEpoch.load(ordering: .acquiring)
        guard epoch != acknowledgedEpoch.load(ordering: .relaxed) else { return nil }
        let offset = requestedOffset.load(ordering: .relaxed)
        return (epoch, offset < 0 ? nil : offset)
    }

    /// The producer now delivers what `epoch` asked for: the bytes it writes from here on are
    /// the new ones (what is before is skipped), and the data flows again.
    public func acknowledgeRestart(_ epoch: Int) {
        asProducer {
            epochStart.store(tail.load(ordering: .relaxed), ordering: .relaxed)
            state.store(DataState.flowing.rawValue, ordering: .relaxed)
            acknowledgedEpoch.store(epoch, ordering: .releasing)
            fullSince.store(0, ordering: .releasing)
            wakeConsumer()
        }
    }

    /// The data ends here.
    public func finish() {
        asProducer {
            state.store(DataState.ended.rawValue, ordering: .releasing)
            wakeConsumer()
        }
    }

    /// The data cannot go on: `error` says why.
    public func fail(_ error: DecoderError) {
        asProducer {
            guard state.load(ordering: .acquiring) != DataState.failed.rawValue else { return }
            failure = error
            state.store(DataState.failed.rawValue, ordering: .releasing)
            wakeConsumer()
        }
    }

    private func wakeConsumer() {
        if consumerWaiting.load(ordering: .acquiring), consumerMayGoOn,
           consumerWaiting.exchange(false, ordering: .acquiringAndReleasing) {
            consumerWakeUp.withLock { $0 }?()
        }
    }

    // MARK: - The owner check

    /// Runs one call of the consumer's side. Debug builds stop the program if another call
    /// of that side is running: the class's contract is one thread at a time per side, and
    /// two consumers at once would tear `head`. Lock-free and allocation-free (the render
    /// thread's reads pass here).
    @inline(__always)
    func asConsumer<Result>(_ call: () -> Result) -> Result {
        Self.alone(on: consumerBusy, "consumer", call)
    }

    /// Runs one call of the producer's side; as ``asConsumer(_:)`` for it (two producers at
    /// once would tear `tail` and the failure).
    @inline(__always)
    func asProducer<Result>(_ call: () -> Result) -> Result {
        Self.alone(on: producerBusy, "producer", call)
    }

    @inline(__always)
    private static func alone<Result>(on busy: borrowing Atomic<Bool>, _ side: StaticString, _ call: () -> Result) -> Result {
        #if DEBUG
        if busy.exchange(true, ordering: .acquiring) { fatalError("two threads are the stream buffer's \(side) at once") }
        defer { busy.store(false, ordering: .releasing) }
        #endif
        return call()
    }

    /// CLOCK_MONOTONIC in nanoseconds.
    public static func monotonicNow() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
