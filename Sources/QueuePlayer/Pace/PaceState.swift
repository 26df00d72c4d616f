/// The render thread's pace stage: the stretcher (``TimeStretcher``) when the rate is not 1,
/// and where its output stands in the item, so that the time told is the item's own and what
/// is heard.
///
/// The accounting is in three counts of a generation: `fed` (item frames given to the stage),
/// `produced` (frames it gave the output) and `consumed` (how many item frames that output
/// stands for: each output frame is `rate` item frames). What the stretcher holds is
/// `fed - consumed`: a frame given now is heard `(fed - consumed) / rate` frames after the last
/// one produced (``boundaryFrame(streamFrame:)``), which places the next item's first frame,
/// and the stretcher's latency is in the time told. At rate 1 the stretcher is out of the path:
/// `consumed` is `fed` and `produced`, and the stage adds nothing but two counts per chunk.
///
/// A value kept by ``Renderer`` and touched only by its render thread.
struct PaceState {
    /// Made for the output's format where the render thread may allocate: on a command, or at
    /// a change of format (``Renderer``).
    var stretcher: TimeStretcher?
    /// Skip silence, before the stretcher; made with it.
    var skipper: SilenceSkipper?
    /// The rate the output is made at (1: the stretcher is out of the path), and how.
    private(set) var rate: Float = 1
    private(set) var mode: TimeStretcher.Mode = .speed
    /// The stretcher has output not yet read (after a write or a flush).
    private(set) var holdsOutput = false
    private(set) var fed: Int64 = 0
    private(set) var produced: Int64 = 0
    private(set) var consumed: Double = 0
    /// The `fed` count at which the current item's frame `originFrame` was given.
    private var originFed: Int64 = 0
    private var originFrame: Int64 = 0

    /// The stretcher is in the path.
    var inPath: Bool { rate != 1 }

    /// The output has reached the current item's first frame: a change of pace now is the
    /// current item's (before, it would fall in the previous one's end).
    var hasPassedItemStart: Bool { consumed >= Double(originFed) }

    /// A new generation, from the item frame `startFrame`: what the stretcher holds is dropped
    /// (read into `scratch`) and it leaves the path until the next chunk asks for it again.
    mutating func restart(scratch: UnsafeMutableRawBufferPointer, startFrame: Int64) {
        if inPath || holdsOutput { stretcher?.reset(scratch: scratch) }
        skipper?.reset()
        holdsOutput = false
        rate = 1
        fed = 0
        produced = 0
        consumed = 0
        originFed = 0
        originFrame = startFrame
    }

    /// The next item's frames, from its `startFrame`, are given from now on.
    mutating func beginItem(startFrame: Int64) {
        originFed = fed
        originFrame = startFrame
    }

    /// Skipped silence: the next frame given is the current item's `itemFrame`.
    mutating func jump(toItemFrame itemFrame: Int64) {
        originFed = fed
        originFrame = itemFrame
    }

    /// The current item's frame at `fedPosition` (a point in the `fed` count).
    func itemFrame(at fedPosition: Double) -> Int64 {
        originFrame + Int64((fedPosition - Double(originFed)).rounded())
    }

    /// The stream frame at which the frame given next is heard. `streamFrame`: the frames
    /// written so far, which it is without a stretcher holding anything.
    func boundaryFrame(streamFrame: Int64) -> Int64 {
        guard inPath || consumed != Double(fed) else { return streamFrame }
        return produced + Int64(((Double(fed) - consumed) / Double(rate)).rounded())
    }

    /// `frames` decoded frames were given to the stage; without the stretcher they are the output.
    mutating func took(_ frames: Int) {
        fed += Int64(frames)
        if !inPath && !holdsOutput {
            produced += Int64(frames)
            consumed = Double(fed)
        }
    }

    /// Into the path at `newRate` (or on at another rate, or in another mode): returns the
    /// stream frame the new pace starts at (the next frame produced).
    mutating func enter(rate newRate: Float, mode newMode: TimeStretcher.Mode) -> Int64 {
        if !inPath { consumed = Double(fed) }
        rate = newRate
        mode = newMode
        stretcher?.set(rate: newRate, mode: newMode)
        return produced
    }

    /// Out of the path: what the stretcher holds is made into output (at the rate it had),
    /// to be read before anything else. Returns the stream frame after it, where rate 1 starts.
    mutating func leave() -> Int64 {
        let available = flushStretcher()
        // Read at rate 1 from here, the flushed output brings `consumed` to `fed`.
        consumed = Double(fed) - Double(available)
        rate = 1
        return produced + Int64(available)
    }

    /// The end of the stream, or of a format: what the stretcher holds is made into output at
    /// the rate it has, to be read before anything else.
    mutating func flushForEnd() {
        let available = flushStretcher()
        consumed = Double(fed) - Double(available) * Double(rate)
    }

    private mutating func flushStretcher() -> Int {
        guard let stretcher else { return 0 }
        stretcher.flush()
        let available = stretcher.availableFrames
        holdsOutput = available > 0
        return available
    }

    /// A new stretcher (another format) once the last one gave out everything it held.
    mutating func replaceStretcher(with new: TimeStretcher?) {
        stretcher = new
        new?.set(rate: rate, mode: mode)
        consumed = Double(fed)
    }

    /// Gives the stretcher `frameCount` frames of `samples` (already counted by ``took(_:)``).
    ///
    /// Sonic 0.2.0 takes a little more or less than `rate` item frames per frame it gives (its
    /// pitch periods are whole frames): over an hour at 3x what is heard would drift seconds
    /// from the time told. Its pace is nudged, by at most 2 %, so that what it holds stays
    /// near its own window (two of its longest pitch periods). Its resampler (``TimeStretcher/Mode/resample``)
    /// keeps the pace within a frame: left as it is.
    mutating func stretch(_ samples: UnsafeRawBufferPointer, frameCount: Int) {
        guard let stretcher else { return }
        _ = stretcher.write(samples, frameCount: frameCount)
        holdsOutput = true
        guard mode == .speed else { return }
        let sampleRate = Double(stretcher.format.sampleRate)
        let target = 2 * (sampleRate / 65).rounded(.down)
        let correction = max(-0.02, min(0.02, (target - (Double(fed) - consumed)) / (2 * sampleRate)))
        stretcher.set(rate: rate * Float(1 + correction), mode: mode)
    }

    /// Reads what the stretcher made into `buffer`; returns the frames read.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let stretcher else {
            holdsOutput = false
            return 0
        }
        let frames = stretcher.read(into: buffer, maximumFrames: .max)
        produced += Int64(frames)
        consumed += Double(frames) * Double(rate)
        holdsOutput = stretcher.availableFrames > 0
        return frames
    }
}
