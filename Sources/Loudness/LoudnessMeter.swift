import CEBUR128
import QueuePlayer

/// An EBU R128 meter (libebur128): integrated loudness (LUFS) and true peak (dBTP) of
/// interleaved 16-bit PCM fed to it in chunks. The only file that sees libebur128's types.
///
/// Its memory is bounded whatever the length: the integrated loudness is kept as a histogram
/// (`EBUR128_MODE_HISTOGRAM`). Not thread-safe: one owner feeds it and reads it.
public final class LoudnessMeter {
    private var state: UnsafeMutablePointer<ebur128_state>?
    public let format: AudioFormat

    /// Nil when libebur128 refuses the format (no channel, a rate it cannot filter).
    public init?(format: AudioFormat) {
        let mode = Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue | EBUR128_MODE_HISTOGRAM.rawValue)
        guard format.channelCount > 0, format.sampleRate > 0,
              let state = ebur128_init(UInt32(format.channelCount), UInt(format.sampleRate), mode) else { return nil }
        self.state = state
        self.format = format
    }

    deinit { ebur128_destroy(&state) }

    /// Adds `frameCount` frames of interleaved samples.
    public func add(_ samples: UnsafePointer<Int16>, frameCount: Int) {
        guard frameCount > 0 else { return }
        _ = ebur128_add_frames_short(state, samples, frameCount)
    }

    /// The integrated loudness so far, in LUFS (-infinity for silence).
    public var integratedLoudness: Double {
        var value = -Double.infinity
        _ = ebur128_loudness_global(state, &value)
        return value
    }

    /// The highest true peak of any channel so far, in dBTP (-infinity for silence).
    public var truePeak: Double {
        var highest = 0.0
        for channel in 0..<format.channelCount {
            var peak = 0.0
            if ebur128_true_peak(state, UInt32(channel), &peak) == 0 { highest = max(highest, peak) }
        }
        return highest > 0 ? 20 * log10(highest) : -.infinity
    }
}

#if canImport(Glibc)
import Glibc
#endif
