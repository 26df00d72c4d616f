import QueuePlayer
import Synchronization

/// A sink that passes everything to another sink and, on the render thread, records
/// what that sink says about its stream right after each write and drain step: the time,
/// the frames it has accepted and its delay. It can also report underruns the inner sink
/// did not have (``simulateUnderrun()``), as a device that ran dry would.
///
/// This is the reference a pacing test compares the player's reported time with. It must
/// come from the render thread: the sink's contract lets only that thread ask for the
/// delay, and a delay read later on another thread belongs to another moment. Recording
/// allocates nothing: the measurements go into a buffer made up front, published through
/// an atomic count, so the render path is the one the player really has.
public final class MeasuringSink: AudioSink, @unchecked Sendable {
    /// One look at the stream, taken on the render thread.
    public struct Measurement: Sendable {
        /// When it was taken, in seconds of the sink's clock (`CLOCK_MONOTONIC` for a real sink).
        public var time: Double
        /// Frames the inner sink had accepted in all.
        public var framesWritten: Int64
        /// Frames accepted but not yet audible, as the inner sink reported them.
        public var delay: Int
        /// The audible frame at `time`.
        public var audibleFrame: Int64 { framesWritten - Int64(delay) }
    }

    public let inner: any AudioSink
    private let framesAccepted = Atomic<Int64>(0)
    // `slots[0..<count]` are written by the render thread alone, each before `count` is
    // stored with release ordering; readers load `count` with acquire ordering first.
    private let slots: UnsafeMutablePointer<Measurement>
    private let capacity: Int
    private let count = Atomic<Int>(0)
    private let simulatedUnderruns = Atomic<Int>(0)

    /// Wraps `inner`, keeping at most `capacity` measurements (later ones are not recorded).
    public init(wrapping inner: any AudioSink, capacity: Int = 100_000) {
        self.inner = inner
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
    }

    deinit { slots.deallocate() }

    /// The measurements taken so far, oldest first.
    public var measurements: [Measurement] {
        let recorded = count.load(ordering: .acquiring)
        return Array(UnsafeBufferPointer(start: slots, count: recorded))
    }

    /// Adds one to the underruns the sink reports, as if its device had run dry and been restarted.
    public func simulateUnderrun() {
        simulatedUnderruns.add(1, ordering: .relaxed)
    }

    public var underruns: Int { inner.underruns + simulatedUnderruns.load(ordering: .relaxed) }

    public var name: String { inner.name }
    public var clock: any PlaybackClock { inner.clock }

    public func configure(_ format: AudioFormat) throws(AudioSinkError) { try inner.configure(format) }

    public func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        let accepted = try inner.write(samples, frameCount: frameCount)
        framesAccepted.add(Int64(accepted), ordering: .relaxed)
        record()
        return accepted
    }

    public func interruptWrite() { inner.interruptWrite() }
    public func delay() -> Int { inner.delay() }
    public func pause() -> Bool { inner.pause() }
    public func resume() { inner.resume() }
    public func flush() { inner.flush() }

    public func waitUntilDrained(timeoutNanoseconds: UInt64) -> Bool {
        let drained = inner.waitUntilDrained(timeoutNanoseconds: timeoutNanoseconds)
        record()
        return drained
    }

    public func close() { inner.close() }

    /// Render thread: appends a measurement.
    private func record() {
        let index = count.load(ordering: .relaxed)
        guard index < capacity else { return }
        let delay = inner.delay()
        slots[index] = Measurement(time: Double(inner.clock.now()) / 1e9,
                                   framesWritten: framesAccepted.load(ordering: .relaxed), delay: delay)
        count.store(index + 1, ordering: .releasing)
    }
}

extension Array where Element == MeasuringSink.Measurement {
    /// The audible frame at `time`, interpolated between the measurements around it, or
    /// extrapolated at `sampleRate` from the nearest one outside them; nil with no measurement.
    public func audibleFrame(at time: Double, sampleRate: Double) -> Double? {
        guard let first, let last else { return nil }
        if time <= first.time { return Double(first.audibleFrame) - (first.time - time) * sampleRate }
        if time >= last.time { return Double(last.audibleFrame) + (time - last.time) * sampleRate }
        // The first measurement after `time` (binary search: the times never decrease).
        var low = 0, high = count - 1
        while low < high {
            let middle = (low + high) / 2
            if self[middle].time <= time { low = middle + 1 } else { high = middle }
        }
        let after = self[low], before = self[low - 1]
        let span = after.time - before.time
        guard span > 0 else { return Double(after.audibleFrame) }
        let fraction = (time - before.time) / span
        return Double(before.audibleFrame) + fraction * Double(after.audibleFrame - before.audibleFrame)
    }
}
