#if canImport(Glibc)
import Glibc
#endif

/// A measurement of an item's loudness: EBU R128 integrated loudness (LUFS) and true peak (dBTP).
public struct LoudnessMeasurement: Sendable, Hashable, Codable {
    public var integrated: Double
    public var truePeak: Double

    public init(integrated: Double, truePeak: Double) {
        self.integrated = integrated
        self.truePeak = truePeak
    }
}

/// How an item's own gain is chosen, as mpd's ReplayGain settings and a loudness target:
/// ``QueuePlayer/gainPolicy``. The default changes nothing (the output stays bit-exact).
public struct GainPolicy: Sendable, Hashable {
    /// ReplayGain's mode as the player applies it (mpd's `auto` is resolved by whoever sets it).
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        case off, track, album
    }

    public var mode: Mode
    /// dB added to a tagged item's gain (mpd's `replaygain_preamp`).
    public var preamp: Double
    /// dB for an item without tags, in a mode other than off (mpd's `replaygain_missing_preamp`).
    public var missingPreamp: Double
    /// The tag's peak keeps the gain from clipping (mpd's `replaygain_limit`).
    public var limit: Bool
    /// LUFS that a measured item without tags (``LoudnessMeasurement``) is brought to; nil: off.
    public var loudnessTarget: Double?
    /// The highest true peak (dBTP) the loudness target's gain lets an item reach.
    public var truePeakCeiling: Double

    public init(mode: Mode = .off, preamp: Double = 0, missingPreamp: Double = 0, limit: Bool = true,
                loudnessTarget: Double? = nil, truePeakCeiling: Double = -1) {
        self.mode = mode
        self.preamp = preamp
        self.missingPreamp = missingPreamp
        self.limit = limit
        self.loudnessTarget = loudnessTarget
        self.truePeakCeiling = truePeakCeiling
    }

    /// The linear gain for an item with `tags` and `measurement`: the tags' in a ReplayGain
    /// mode (plus the preamp, limited by the peak); else, with a target and a measurement, the
    /// target's (limited so the true peak stays at the ceiling); else the missing preamp in a
    /// ReplayGain mode; else 1.
    public func scale(tags: ReplayGainInfo?, measurement: LoudnessMeasurement?) -> Double {
        if mode != .off, let tagged = tags?.values(album: mode == .album) {
            var scale = Self.linear(tagged.gain + preamp)
            if limit, let peak = tagged.peak, peak > 0, scale * peak > 1 { scale = 1 / peak }
            return scale
        }
        if let loudnessTarget, let measurement, measurement.integrated.isFinite {
            let gain = min(loudnessTarget - measurement.integrated, truePeakCeiling - measurement.truePeak)
            return Self.linear(gain)
        }
        return mode == .off ? 1 : Self.linear(missingPreamp)
    }

    /// The ``SoftwareVolume`` gain (1/1024) for a linear `scale`: exactly unity at 0 dB,
    /// at most +24 dB (the render path's arithmetic stays in 32 bits).
    public static func fixedPoint(_ scale: Double) -> Int32 {
        guard scale.isFinite, scale > 0 else { return 0 }
        return Int32((min(scale, 15.85) * Double(SoftwareVolume.unity)).rounded())
    }

    static func linear(_ decibels: Double) -> Double { pow(10, decibels / 20) }
}
