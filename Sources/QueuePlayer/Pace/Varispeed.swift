/// Playback at a rate with the pitch following it, as a tape played faster: linear
/// interpolation between frames, `rate` input frames per output frame (what Sonic's resampler
/// does, whose 0.2.0 indexes the frames of more than one channel wrongly: Debian's, fixed
/// upstream in 2017).
///
/// Holds what it has not consumed in storage made once (``init(channelCount:capacity:)``):
/// writes of up to `capacity` frames, read out before the next, allocate nothing.
/// Not `Sendable`: the render thread's, through ``TimeStretcher``.
struct Varispeed: ~Copyable {
    let channelCount: Int
    /// Input frames per output frame.
    var rate: Double = 1
    private let held: UnsafeMutablePointer<Int16>
    private let capacity: Int
    private var heldFrames = 0
    /// Where the next output frame lies, in frames from the first held one.
    private var position: Double = 0
    /// Flushed: once the last frame is out, what is left is dropped.
    private var flushing = false

    init(channelCount: Int, capacity: Int) {
        self.channelCount = channelCount
        self.capacity = capacity
        held = .allocate(capacity: (capacity + 2) * channelCount)
    }

    deinit { held.deallocate() }

    /// Takes `frameCount` frames (no more than fit: the rest are dropped).
    mutating func write(_ samples: UnsafePointer<Int16>, frameCount: Int) {
        let frames = min(frameCount, capacity + 2 - heldFrames)
        (held + heldFrames * channelCount).update(from: samples, count: frames * channelCount)
        heldFrames += frames
    }

    /// Output frames ready: those whose two neighbours are both held.
    var availableFrames: Int {
        let span = Double(heldFrames - 1) - position
        guard span > 0 else { return 0 }
        return Int((span / rate).rounded(.up))
    }

    /// Makes up to `maximumFrames` output frames into `out`; returns how many.
    mutating func read(into out: UnsafeMutablePointer<Int16>, maximumFrames: Int) -> Int {
        var made = 0
        while made < maximumFrames {
            let index = Int(position)
            guard index + 1 < heldFrames else { break }
            let fraction = position - Double(index)
            let left = held + index * channelCount
            let right = left + channelCount
            for channel in 0..<channelCount {
                let a = Double(left[channel])
                let value = a + (Double(right[channel]) - a) * fraction
                out[made * channelCount + channel] = Int16(value.rounded())
            }
            made += 1
            position += rate
        }
        // What lies wholly behind the next output frame is let go.
        let consumed = min(Int(position), heldFrames)
        if consumed > 0 {
            held.update(from: held + consumed * channelCount, count: (heldFrames - consumed) * channelCount)
            heldFrames -= consumed
            position -= Double(consumed)
        }
        if flushing && availableFrames == 0 { reset() }
        return made
    }

    /// Lets out everything held: the last frame is repeated so that its own output is due.
    mutating func flush() {
        guard heldFrames > 0 else { return }
        (held + heldFrames * channelCount).update(from: held + (heldFrames - 1) * channelCount, count: channelCount)
        heldFrames += 1
        flushing = true
    }

    /// Drops everything held.
    mutating func reset() {
        heldFrames = 0
        position = 0
        flushing = false
    }
}
