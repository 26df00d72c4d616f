/// Skip silence (Overcast's Smart Speed, AntennaPod's skip silence; AVFoundation has none): a
/// stretch quieter than ``threshold`` (−50 dBFS) lasting at least ``minimumSeconds`` (1 s) is
/// shortened to its first and last ``keptSeconds`` (0.15 s each: 0.3 s remain, its fades kept);
/// nothing louder is touched.
///
/// A first-in, first-out queue of frames in storage made once: each chunk written is classed
/// by its peak (chunks of the decoder's, about 23 ms), and a quiet one is held back until the
/// quiet has lasted long enough to be shortened, or something loud lets it out unchanged. What
/// is dropped is the item's time skipped, as a seek would: ``read(into:maximumFrames:)`` says
/// how much lies before the frames it gives (the render thread reports it as a jump of the
/// item's time, ``RenderEvent/Kind/paced``).
///
/// Not `Sendable`: the render thread's (``PaceState``). Writes of up to `chunkCapacity` frames,
/// with every readable frame read before the next write, allocate nothing.
final class SilenceSkipper {
    /// −50 dBFS of a 16-bit sample's full scale (32,767 × 10^(−50/20)).
    static let threshold = 104
    static let minimumSeconds = 1.0
    static let keptSeconds = 0.15

    let format: AudioFormat
    private let channelCount: Int
    private let minimum: Int
    private let kept: Int
    private let storage: UnsafeMutablePointer<Int16>
    private let capacity: Int
    /// The queue: `count` frames from `start` (a ring), the last `held` of them held back.
    private var start = 0
    private var count = 0
    private var held = 0
    /// The current quiet stretch's length so far, and whether it is being shortened.
    private var quiet = 0
    private var skipping = false
    /// Frames dropped, and how many queued frames lie before the place they were dropped from.
    private var skipped = 0
    private var framesBeforeSkip = 0

    init(format: AudioFormat, chunkCapacity: Int) {
        self.format = format
        channelCount = format.channelCount
        minimum = Int(Double(format.sampleRate) * Self.minimumSeconds)
        kept = Int(Double(format.sampleRate) * Self.keptSeconds)
        capacity = minimum + 2 * chunkCapacity
        storage = .allocate(capacity: capacity * channelCount)
    }

    deinit { storage.deallocate() }

    /// Something is queued (readable or held).
    var isEmpty: Bool { count == 0 }
    /// Frames ready to read.
    var readableFrames: Int { count - held }

    /// Queues `frameCount` frames of `samples`; returns how many frames of quiet it dropped.
    /// Without `skipping` the chunk only follows what is queued, and what was held goes out.
    func write(_ samples: UnsafePointer<Int16>, frameCount: Int, skipping allowed: Bool = true) -> Int {
        guard allowed else {
            append(samples, frameCount: frameCount)
            letOut()
            return 0
        }
        var peak = 0
        for index in 0..<(frameCount * channelCount) {
            let magnitude = abs(Int(samples[index]))
            if magnitude > peak { peak = magnitude }
        }
        append(samples, frameCount: frameCount)
        guard peak < Self.threshold else {
            // Loud: whatever quiet was held (all of a short one, the end of a long one) goes out before it.
            letOut()
            return 0
        }
        let before = quiet
        quiet += frameCount
        // The quiet's first `kept` frames go out as they come; the rest wait.
        held += frameCount - max(0, min(frameCount, kept - before))
        if quiet >= minimum { skipping = true }
        guard skipping, held > kept else { return 0 }
        // Long enough: of what is held, only the last `kept` frames stay (the quiet's end, until it ends).
        let dropped = held - kept
        let firstHeld = count - held
        if firstHeld == 0 {
            start = (start + dropped) % capacity
        } else {
            // Readable frames before the held ones (not read since the last write): the held
            // frames kept move up behind them.
            for frame in 0..<kept {
                let from = (start + firstHeld + dropped + frame) % capacity
                let to = (start + firstHeld + frame) % capacity
                (storage + to * channelCount).update(from: storage + from * channelCount, count: channelCount)
            }
        }
        count -= dropped
        held = kept
        skipped += dropped
        framesBeforeSkip = count - held
        return dropped
    }

    /// Reads up to `maximumFrames` readable frames into `out`: how many, and how many frames
    /// were dropped just before the first of them.
    func read(into out: UnsafeMutablePointer<Int16>, maximumFrames: Int) -> (frames: Int, skippedBefore: Int) {
        var frames = min(maximumFrames, readableFrames)
        var skippedBefore = 0
        if skipped > 0 {
            if framesBeforeSkip > 0 {
                frames = min(frames, framesBeforeSkip)
                framesBeforeSkip -= frames
            } else if frames > 0 {
                skippedBefore = skipped
                skipped = 0
            }
        }
        let first = min(frames, capacity - start)
        out.update(from: storage + start * channelCount, count: first * channelCount)
        if frames > first {
            (out + first * channelCount).update(from: storage, count: (frames - first) * channelCount)
        }
        start = (start + frames) % capacity
        count -= frames
        return (frames, skippedBefore)
    }

    /// The item ends (or skipping is turned off): what is held goes out.
    func letOut() {
        held = 0
        quiet = 0
        skipping = false
    }

    /// Drops everything (a new load).
    func reset() {
        start = 0
        count = 0
        skipped = 0
        framesBeforeSkip = 0
        letOut()
    }

    private func append(_ samples: UnsafePointer<Int16>, frameCount: Int) {
        let end = (start + count) % capacity
        let first = min(frameCount, capacity - end)
        (storage + end * channelCount).update(from: samples, count: first * channelCount)
        if frameCount > first {
            storage.update(from: samples + first * channelCount, count: (frameCount - first) * channelCount)
        }
        count += frameCount
    }
}
