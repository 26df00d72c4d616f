import Synchronization

/// The render thread's latest measurement of its stream, published without locks.
///
/// A sequence lock: the render thread is the only writer; readers retry if a
/// write overlapped their read. Every field is itself atomic, so a torn read is
/// detected, never undefined.
final class StreamPosition: Sendable {
    struct Snapshot: Sendable, Equatable {
        /// The generation (player load) the figures belong to.
        var generation: UInt64 = 0
        /// Frames handed to the sink since the generation started.
        var framesWritten: Int64 = 0
        /// Frames written but not yet audible, when measured.
        var delay: Int64 = 0
        /// When the delay was measured (the sink's clock, nanoseconds).
        var measuredAt: UInt64 = 0
        /// The sink's current sample rate.
        var sampleRate: Int = 0
        /// True while the sink consumes (playing, not paused or idle).
        var isRunning = false
        /// The device's own count of what it had played when the delay was measured, for a
        /// sink that can be asked again from other threads (``AudioSink/playedFrames()``).
        var played: PlayedFrames?

        /// This measurement brought forward to a later answer of the device, `played`, from
        /// any thread: what the device played since goes from the delay. Unchanged when the
        /// answer is of another stream (the device was restarted since: the render thread
        /// measures afresh), not later, or behind the measurement's own count.
        func updated(with played: PlayedFrames) -> Snapshot {
            guard let measured = self.played, played.stream == measured.stream,
                  played.measuredAt > measuredAt, played.frames >= measured.frames else { return self }
            var updated = self
            updated.delay = max(0, delay - (played.frames - measured.frames))
            updated.measuredAt = played.measuredAt
            updated.played = played
            return updated
        }

        /// The audible frame at `now`, interpolated from the measurement and
        /// never beyond what was written.
        func audibleFrame(at now: UInt64) -> Double {
            let measured = Double(framesWritten - delay)
            guard isRunning, sampleRate > 0, now > measuredAt else { return measured }
            let advanced = measured + Double(now - measuredAt) * Double(sampleRate) / 1e9
            return min(advanced, Double(framesWritten))
        }
    }

    private let sequence = Atomic<UInt64>(0)
    private let generation = Atomic<UInt64>(0)
    private let framesWritten = Atomic<Int64>(0)
    private let delay = Atomic<Int64>(0)
    private let measuredAt = Atomic<UInt64>(0)
    private let sampleRate = Atomic<Int>(0)
    private let isRunning = Atomic<Bool>(false)
    /// `played`: its stream (0 for none: sinks number their streams from 1), frames and time.
    private let playedStream = Atomic<UInt64>(0)
    private let playedFrames = Atomic<Int64>(0)
    private let playedAt = Atomic<UInt64>(0)

    /// Render thread: publishes a new measurement.
    func publish(_ snapshot: Snapshot) {
        let start = sequence.load(ordering: .relaxed)
        sequence.store(start &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        generation.store(snapshot.generation, ordering: .relaxed)
        framesWritten.store(snapshot.framesWritten, ordering: .relaxed)
        delay.store(snapshot.delay, ordering: .relaxed)
        measuredAt.store(snapshot.measuredAt, ordering: .relaxed)
        sampleRate.store(snapshot.sampleRate, ordering: .relaxed)
        isRunning.store(snapshot.isRunning, ordering: .relaxed)
        playedStream.store(snapshot.played?.stream ?? 0, ordering: .relaxed)
        playedFrames.store(snapshot.played?.frames ?? 0, ordering: .relaxed)
        playedAt.store(snapshot.played?.measuredAt ?? 0, ordering: .relaxed)
        sequence.store(start &+ 2, ordering: .releasing)
    }

    /// Any thread: the latest consistent measurement.
    func read() -> Snapshot {
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before & 1 == 1 { continue }
            let stream = playedStream.load(ordering: .relaxed)
            let snapshot = Snapshot(
                generation: generation.load(ordering: .relaxed),
                framesWritten: framesWritten.load(ordering: .relaxed),
                delay: delay.load(ordering: .relaxed),
                measuredAt: measuredAt.load(ordering: .relaxed),
                sampleRate: sampleRate.load(ordering: .relaxed),
                isRunning: isRunning.load(ordering: .relaxed),
                played: stream == 0 ? nil : PlayedFrames(stream: stream, frames: playedFrames.load(ordering: .relaxed),
                                                         measuredAt: playedAt.load(ordering: .relaxed)))
            atomicMemoryFence(ordering: .acquiring)
            if sequence.load(ordering: .relaxed) == before { return snapshot }
        }
    }
}
