import CSonic

/// Sonic's time-stretcher (libsonic) over the engine's PCM (``AudioFormat``: interleaved
/// 16-bit): the one place that calls it.
///
/// Two ways to play at a rate: ``Mode/speed`` keeps the pitch (Sonic's pitch-synchronous
/// overlap-add, made for speech: `sonicSetSpeed`), ``Mode/resample`` lets the pitch follow the
/// rate (``Varispeed``: Sonic 0.2.0's resampler, `sonicSetRate`, mixes the channels of stereo
/// up). A change of mode is made with nothing held (``Renderer`` flushes first). Sonic grows its buffers with `realloc` when a write
/// needs more room: ``init(format:)`` grows them past anything the render thread asks of them
/// (writes of at most ``maximumWriteFrames`` frames, every frame read out before the next
/// write, rates from ``slowest``), so that writes, reads and flushes after it allocate nothing.
///
/// Not `Sendable`: made and used by the render thread alone (``Renderer``).
final class TimeStretcher {
    /// How a rate other than 1 is played.
    enum Mode: Equatable {
        /// The pitch is kept (`AVAudioTimePitchAlgorithm.timeDomain`).
        case speed
        /// The pitch follows the rate, as a tape played faster (`.varispeed`).
        case resample
    }

    /// The most frames one ``write(_:frameCount:)`` takes.
    static let maximumWriteFrames = 8_192
    /// The slowest rate the buffers are grown for (below the player's 0.5, for the stretcher's
    /// own correction of its pace: ``Renderer``).
    static let slowest: Float = 0.45

    let format: AudioFormat
    private let stream: sonicStream
    private var varispeed: Varispeed
    private var mode = Mode.speed

    /// Nil when Sonic cannot allocate its stream.
    init?(format: AudioFormat) {
        guard let stream = sonicCreateStream(Int32(format.sampleRate), Int32(format.channelCount)) else { return nil }
        self.stream = stream
        self.format = format
        varispeed = Varispeed(channelCount: format.channelCount, capacity: Self.maximumWriteFrames)
        // Grow every buffer once, through the paths the render thread takes: a write and a
        // flush at the slowest rate, in both modes, of silence, read out and thrown away.
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.maximumWriteFrames * format.bytesPerFrame * 4, alignment: 16)
        defer { scratch.deallocate() }
        scratch.initializeMemory(as: UInt8.self, repeating: 0)
        set(rate: Self.slowest, mode: .speed)
        _ = write(UnsafeRawBufferPointer(scratch), frameCount: Self.maximumWriteFrames)
        while read(into: scratch, maximumFrames: Self.maximumWriteFrames * 4) > 0 {}
        flush()
        while read(into: scratch, maximumFrames: Self.maximumWriteFrames * 4) > 0 {}
        set(rate: 1, mode: .speed)
    }

    deinit { sonicDestroyStream(stream) }

    /// Plays what is written from now on at `rate` (item time per output time) in `mode`.
    /// Sonic's setter of its resampling rate restarts the resampler's phase: each is called
    /// only for a value that changes.
    func set(rate: Float, mode: Mode) {
        self.mode = mode
        if mode == .resample {
            varispeed.rate = Double(rate)
        } else if sonicGetSpeed(stream) != rate {
            sonicSetSpeed(stream, rate)
        }
    }

    /// Takes `frameCount` frames (at most ``maximumWriteFrames``) of `samples`; false if
    /// Sonic could not grow a buffer (not after ``init(format:)``).
    func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) -> Bool {
        guard frameCount > 0 else { return true }
        if mode == .resample {
            varispeed.write(samples.baseAddress!.assumingMemoryBound(to: Int16.self), frameCount: frameCount)
            return true
        }
        let pointer = UnsafeMutablePointer(mutating: samples.baseAddress!.assumingMemoryBound(to: Int16.self))
        return sonicWriteShortToStream(stream, pointer, Int32(frameCount)) != 0
    }

    /// Frames of output ready to read.
    var availableFrames: Int { mode == .resample ? varispeed.availableFrames : Int(sonicSamplesAvailable(stream)) }

    /// Reads up to `maximumFrames` frames of output into `buffer`; returns how many.
    func read(into buffer: UnsafeMutableRawBufferPointer, maximumFrames: Int) -> Int {
        let capacity = min(maximumFrames, buffer.count / format.bytesPerFrame)
        if mode == .resample {
            return varispeed.read(into: buffer.baseAddress!.assumingMemoryBound(to: Int16.self), maximumFrames: capacity)
        }
        return Int(sonicReadShortFromStream(stream, buffer.baseAddress!.assumingMemoryBound(to: Int16.self), Int32(capacity)))
    }

    /// Turns everything written into output (at the rate set): read it out, and the stretcher
    /// holds nothing. Sonic pads the end with silence and keeps only the output due.
    func flush() {
        if mode == .resample { return varispeed.flush() }
        _ = sonicFlushStream(stream)
    }

    /// Drops everything written and not read (a seek, a new load): flushed and read into
    /// `scratch`, thrown away.
    func reset(scratch: UnsafeMutableRawBufferPointer) {
        flush()
        while read(into: scratch, maximumFrames: .max) > 0 {}
        varispeed.reset()
    }
}
