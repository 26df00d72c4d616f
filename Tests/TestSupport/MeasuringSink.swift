import Foundation
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
        /// The inner sink's own count of what its device had played, if it keeps one
        /// (``AudioSink/measureDelay()``).
        public var played: PlayedFrames?
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
    // The same for what ``startSampling(every:)`` asks from another thread.
    private let samples: UnsafeMutablePointer<PlayedFrames>
    private let sampleCount = Atomic<Int>(0)
    private let answersToOthers = Atomic<Int>(0)
    private let sampling = Atomic<Bool>(false)
    private let samplerStopped = DispatchSemaphore(value: 0)

    /// Wraps `inner`, keeping at most `capacity` measurements (later ones are not recorded).
    public init(wrapping inner: any AudioSink, capacity: Int = 100_000) {
        self.inner = inner
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
        samples = .allocate(capacity: capacity)
    }

    deinit {
        slots.deallocate()
        samples.deallocate()
    }

    /// Asks the inner sink how far its device has played (``AudioSink/playedFrames()``)
    /// every `interval` nanoseconds on a thread of its own until ``stopSampling()``: a
    /// reference with no gaps, where the render thread measures only when it writes.
    public func startSampling(every interval: UInt64 = 2_000_000) {
        guard !sampling.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            while sampling.load(ordering: .acquiring) {
                let index = sampleCount.load(ordering: .relaxed)
                if index < capacity, let played = inner.playedFrames() {
                    samples[index] = played
                    sampleCount.store(index + 1, ordering: .releasing)
                }
                var pause = timespec(tv_sec: 0, tv_nsec: Int(interval))
                nanosleep(&pause, nil)
            }
            samplerStopped.signal()
        }
        thread.start()
    }

    /// Ends ``startSampling(every:)`` and waits for its thread.
    public func stopSampling() {
        guard sampling.exchange(false, ordering: .acquiringAndReleasing) else { return }
        samplerStopped.wait()
    }

    /// What ``startSampling(every:)`` recorded, oldest first.
    public var sampled: [PlayedFrames] {
        Array(UnsafeBufferPointer(start: samples, count: sampleCount.load(ordering: .acquiring)))
    }

    /// For each device stream, what the render thread's measurements say the audible frame
    /// is ahead of the device's own count: one value per stream when the sink counts right.
    public var playedOffsets: [UInt64: Set<Int64>] {
        var offsets: [UInt64: Set<Int64>] = [:]
        for measurement in measurements {
            if let played = measurement.played { offsets[played.stream, default: []].insert(measurement.audibleFrame - played.frames) }
        }
        return offsets
    }

    /// The measurements and the samples together, by time: each sample becomes a measurement
    /// of the audible frame through a measurement of the same device stream that carries
    /// the device's count too (the two counts differ by a constant within a stream). Samples
    /// of a stream no measurement ties down are left out.
    public var measurementsWithSamples: [Measurement] {
        let measured = measurements
        let offsets = playedOffsets.compactMapValues(\.first)
        let fromSamples = sampled.compactMap { sample -> Measurement? in
            guard let offset = offsets[sample.stream] else { return nil }
            return Measurement(time: Double(sample.measuredAt) / 1e9, framesWritten: sample.frames + offset, delay: 0, played: sample)
        }
        return (measured + fromSamples).sorted { $0.time < $1.time }
    }

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
    public func measureDelay() -> (delay: Int, played: PlayedFrames?) { inner.measureDelay() }
    public func playedFrames() -> PlayedFrames? {
        let played = inner.playedFrames()
        if played != nil { answersToOthers.add(1, ordering: .relaxed) }
        return played
    }

    public var positionPeriod: UInt64 { inner.positionPeriod }

    /// How many times the inner sink told a caller of ``playedFrames()`` (the player's clock
    /// thread; not this sink's own sampling) how far its device had played.
    public var playedFramesAnswers: Int { answersToOthers.load(ordering: .relaxed) }
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
        let measured = inner.measureDelay()
        slots[index] = Measurement(time: Double(inner.clock.now()) / 1e9,
                                   framesWritten: framesAccepted.load(ordering: .relaxed), delay: measured.delay,
                                   played: measured.played)
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
