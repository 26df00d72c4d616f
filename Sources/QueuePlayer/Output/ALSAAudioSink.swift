import CALSA
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Audio output through alsa-lib's PCM API, to any device name alsa-lib knows
/// (`default`, `hw:0`, a plugin defined in an asoundrc, ...).
///
/// The stream is opened once per format and stays open across items of that
/// format, so consecutive items follow each other sample for sample. Underruns
/// are recovered with `snd_pcm_recover` without losing the stream position.
///
/// The device belongs to the render thread (and to ``close()`` once that thread has
/// stopped); the counters other threads read are atomics.
public final class ALSAAudioSink: AudioSink, @unchecked Sendable {
    // `pcm`, `format` and `canPause` are touched by the render thread only
    // (and by `close()`, which the player calls after that thread has stopped).
    private var pcm: OpaquePointer?
    private var format: AudioFormat?
    private var canPause = false
    private let underrunCount = Atomic<Int>(0)
    private let writtenCount = Atomic<Int64>(0)
    private let openCount = Atomic<Int>(0)

    /// The alsa-lib device name.
    public let device: String
    public let clock: any PlaybackClock = RealTimeClock.shared
    public var name: String { "alsa:\(device)" }

    /// The device buffer the sink asks for, in microseconds. The default, 500 ms, is
    /// mpd's; much less makes ALSA's pulse plugin stall at the start of a stream.
    public let bufferTimeMicroseconds: UInt32

    /// Creates a sink for `device`; nothing is opened until the first ``configure(_:)``.
    public init(device: String = "default", bufferTimeMicroseconds: UInt32 = 500_000) {
        self.device = device
        self.bufferTimeMicroseconds = bufferTimeMicroseconds
        calsa_silence_errors()
    }

    deinit { close() }

    /// How many underruns the sink has recovered from.
    public var underruns: Int { underrunCount.load(ordering: .relaxed) }

    /// Every frame alsa-lib has accepted, across reopenings.
    public var framesWritten: Int64 { writtenCount.load(ordering: .relaxed) }

    /// How many times the device has been opened (one per format change, plus reopenings).
    public var opens: Int { openCount.load(ordering: .relaxed) }

    /// True while the device is open.
    public var isOpen: Bool { pcm != nil }

    /// True while the stream has run dry (`SND_PCM_STATE_XRUN`): the next write recovers it
    /// and counts an underrun. alsa-lib updates the state when asked for the delay or the
    /// space available. Render thread only, like every call on the device.
    public var isStarved: Bool {
        guard let pcm else { return false }
        return snd_pcm_state(pcm) == SND_PCM_STATE_XRUN
    }

    /// Opens `device` once and closes it, to tell whether playback there can work at all.
    public static func probe(device: String) -> Result<Void, AudioSinkError> {
        calsa_silence_errors()
        var handle: OpaquePointer?
        let result = snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, Int32(SND_PCM_NONBLOCK))
        if result < 0 {
            return .failure(AudioSinkError(sink: "alsa:\(device)", reason: "cannot open device: \(errorText(result))"))
        }
        snd_pcm_close(handle)
        return .success(())
    }

    public func configure(_ format: AudioFormat) throws(AudioSinkError) {
        if pcm != nil, self.format == format { return }
        close()
        var handle: OpaquePointer?
        try check(snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, 0), "cannot open device")
        guard let handle else { throw AudioSinkError(sink: name, reason: "cannot open device") }
        do {
            try setHardwareParameters(handle, format)
            try setSoftwareParameters(handle)
            try check(snd_pcm_prepare(handle), "cannot prepare the stream")
        } catch {
            snd_pcm_close(handle)
            throw error
        }
        pcm = handle
        self.format = format
        openCount.add(1, ordering: .relaxed)
    }

    public func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        guard let pcm else { throw AudioSinkError(sink: name, reason: "write to a closed device") }
        while true {
            let result = snd_pcm_writei(pcm, samples.baseAddress, snd_pcm_uframes_t(frameCount))
            if result >= 0 {
                writtenCount.add(Int64(result), ordering: .relaxed)
                return Int(result)
            }
            let code = Int32(result)
            if code == -EAGAIN { continue }
            if code == -EPIPE { underrunCount.add(1, ordering: .relaxed) }
            let recovered = snd_pcm_recover(pcm, code, 1)
            if recovered < 0 {
                throw AudioSinkError(sink: name, reason: "write failed: \(Self.errorText(code))")
            }
        }
    }

    public func delay() -> Int {
        guard let pcm else { return 0 }
        var frames: snd_pcm_sframes_t = 0
        if snd_pcm_delay(pcm, &frames) < 0 { return 0 }
        return max(0, Int(frames))
    }

    public func pause() -> Bool {
        guard let pcm else { return true }
        let state = snd_pcm_state(pcm)
        if state != SND_PCM_STATE_RUNNING { return state != SND_PCM_STATE_XRUN || delay() == 0 }
        if canPause, snd_pcm_pause(pcm, 1) == 0 { return true }
        snd_pcm_drop(pcm)
        snd_pcm_prepare(pcm)
        return false
    }

    public func resume() {
        guard let pcm else { return }
        if snd_pcm_state(pcm) == SND_PCM_STATE_PAUSED { snd_pcm_pause(pcm, 0) }
    }

    public func flush() {
        guard let pcm else { return }
        snd_pcm_drop(pcm)
        snd_pcm_prepare(pcm)
    }

    public func waitUntilDrained(timeoutNanoseconds: UInt64) -> Bool {
        guard let pcm, let format else { return true }
        let state = snd_pcm_state(pcm)
        if state == SND_PCM_STATE_PREPARED, delay() > 0 { snd_pcm_start(pcm) }
        if state != SND_PCM_STATE_RUNNING && state != SND_PCM_STATE_PREPARED { return true }
        let remaining = UInt64(delay()) * 1_000_000_000 / UInt64(format.sampleRate)
        if remaining <= timeoutNanoseconds {
            // Close to the end: let alsa-lib play the tail out exactly, then make the stream writable again.
            snd_pcm_drain(pcm)
            snd_pcm_prepare(pcm)
            return true
        }
        clock.sleep(nanoseconds: timeoutNanoseconds)
        return false
    }

    public func close() {
        if let pcm { snd_pcm_close(pcm) }
        pcm = nil
        format = nil
    }

    // MARK: - Private

    private func setHardwareParameters(_ handle: OpaquePointer, _ format: AudioFormat) throws(AudioSinkError) {
        var params: OpaquePointer?
        snd_pcm_hw_params_malloc(&params)
        defer { snd_pcm_hw_params_free(params) }
        try check(snd_pcm_hw_params_any(handle, params), "no configuration available")
        try check(snd_pcm_hw_params_set_rate_resample(handle, params, 1), "cannot enable resampling")
        try check(snd_pcm_hw_params_set_access(handle, params, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access not supported")
        try check(snd_pcm_hw_params_set_format(handle, params, SND_PCM_FORMAT_S16), "16-bit samples not supported")
        try check(snd_pcm_hw_params_set_channels(handle, params, UInt32(format.channelCount)), "\(format.channelCount) channels not supported")
        try check(snd_pcm_hw_params_set_rate(handle, params, UInt32(format.sampleRate), 0), "\(format.sampleRate) Hz not supported")
        var bufferTime = bufferTimeMicroseconds
        var direction: Int32 = 0
        try check(snd_pcm_hw_params_set_buffer_time_near(handle, params, &bufferTime, &direction), "cannot set the buffer time")
        var periodTime = bufferTimeMicroseconds / 4
        direction = 0
        try check(snd_pcm_hw_params_set_period_time_near(handle, params, &periodTime, &direction), "cannot set the period time")
        try check(snd_pcm_hw_params(handle, params), "cannot apply the hardware parameters")
        canPause = snd_pcm_hw_params_can_pause(params) == 1
    }

    private func setSoftwareParameters(_ handle: OpaquePointer) throws(AudioSinkError) {
        var params: OpaquePointer?
        snd_pcm_sw_params_malloc(&params)
        defer { snd_pcm_sw_params_free(params) }
        try check(snd_pcm_sw_params_current(handle, params), "cannot read the software parameters")
        // Start as soon as data arrives: the render thread fills the buffer faster than it plays.
        try check(snd_pcm_sw_params_set_start_threshold(handle, params, 1), "cannot set the start threshold")
        try check(snd_pcm_sw_params(handle, params), "cannot apply the software parameters")
    }

    private func check(_ result: Int32, _ what: String) throws(AudioSinkError) {
        if result < 0 { throw AudioSinkError(sink: name, reason: "\(what): \(Self.errorText(result))") }
    }

    static func errorText(_ code: Int32) -> String { String(cString: snd_strerror(code)) }
}
