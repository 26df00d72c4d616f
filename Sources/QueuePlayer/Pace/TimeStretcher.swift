import CSonic

/// Sonic's time-stretcher (libsonic) over the engine's PCM (``AudioFormat``: interleaved
/// 16-bit): the one place that calls it.
///
/// Two ways to play at a rate: ``Mode/speed`` keeps the pitch (Sonic's pitch-synchronous
/// overlap-add, made for speech: `sonicSetSpeed`), ``Mode/resample`` lets the pitch follow the
/// rate (Sonic's resampler: `sonicSetRate`). Sonic grows its buffers with `realloc` when a write
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

    /// Nil when Sonic cannot allocate its stream.
    init?(format: AudioFormat) {
        guard let stream = sonicCreateStream(Int32(format.sampleRate), Int32(format.channelCount)) else { return nil }
        self.stream = stream
        self.format = format
        // Grow every buffer once, through the paths the render thread takes: a write and a
        // flush at the slowest rate, in both modes, of silence, read out and thrown away.
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.maximumWriteFrames * format.bytesPerFrame * 4, alignment: 16)
        defer { scratch.deallocate() }
        scratch.initializeMemory(as: UInt8.self, repeating: 0)
        for mode in [Mode.speed, .resample] {
            set(rate: Self.slowest, mode: mode)
            _ = write(UnsafeRawBufferPointer(scratch), frameCount: Self.maximumWriteFrames)
            while read(into: scratch, maximumFrames: Self.maximumWriteFrames * 4) > 0 {}
            flush()
            while read(into: scratch, maximumFrames: Self.maximumWriteFrames * 4) > 0 {}
        }
        set(rate: 1, mode: .speed)
    }

    deinit { sonicDestroyStream(stream) }

    /// Plays what is written from now on at `rate` (item time per output time) in `mode`.
    func set(rate: Float, mode: Mode) {
        switch mode {
        case .speed:
            sonicSetRate(stream, 1)
            sonicSetSpeed(stream, rate)
        case .resample:
            sonicSetSpeed(stream, 1)
            sonicSetRate(stream, rate)
        }
    }

    /// Takes `frameCount` frames (at most ``maximumWriteFrames``) of `samples`; false if
    /// Sonic could not grow a buffer (not after ``init(format:)``).
    func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) -> Bool {
        guard frameCount > 0 else { return true }
        let pointer = UnsafeMutablePointer(mutating: samples.baseAddress!.assumingMemoryBound(to: Int16.self))
        return sonicWriteShortToStream(stream, pointer, Int32(frameCount)) != 0
    }

    /// Frames of output ready to read.
    var availableFrames: Int { Int(sonicSamplesAvailable(stream)) }

    /// Reads up to `maximumFrames` frames of output into `buffer`; returns how many.
    func read(into buffer: UnsafeMutableRawBufferPointer, maximumFrames: Int) -> Int {
        let capacity = min(maximumFrames, buffer.count / format.bytesPerFrame)
        return Int(sonicReadShortFromStream(stream, buffer.baseAddress!.assumingMemoryBound(to: Int16.self), Int32(capacity)))
    }

    /// Turns everything written into output (at the rate set): read it out, and the stretcher
    /// holds nothing. Sonic pads the end with silence and keeps only the output due.
    func flush() {
        _ = sonicFlushStream(stream)
    }

    /// Drops everything written and not read (a seek, a new load): flushed and read into
    /// `scratch`, thrown away.
    func reset(scratch: UnsafeMutableRawBufferPointer) {
        flush()
        while read(into: scratch, maximumFrames: .max) > 0 {}
    }
}
