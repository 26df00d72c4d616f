#if canImport(Glibc)
import Glibc
#endif

/// A software mixer for interleaved signed 16-bit PCM, as MPD's `mixer_type "software"`:
/// the volume a client sets (0 to 100) scales the samples on their way to the device.
///
/// The percentage maps onto a gain along MPD's exponential curve (so equal steps sound
/// like equal steps), in 1/1024 units. At 100 the gain is exactly 1 and ``apply(to:)``
/// leaves every byte as it is, so the output stays bit-exact (gapless tests compare it).
/// Applying allocates nothing and takes no lock: it is meant for the render thread, which
/// reads the gain from an atomic the control side sets.
public enum SoftwareVolume {
    /// The gain of 100 %: samples unchanged.
    public static let unity: Int32 = 1024

    /// The linear volume (0 to 1, as `QueuePlayer.volume` takes it) for a mixer setting of
    /// `percent` (clamped to 0...100), along MPD's curve: (e^(v/25) - 1) / (e^4 - 1).
    public static func linearVolume(percent: Int) -> Float {
        let volume = Double(min(max(percent, 0), 100))
        if volume >= 100 { return 1 }
        return Float((exp(volume / 25) - 1) / (exp(4) - 1))
    }

    /// The gain for a linear `volume` (clamped to 0...1): exactly ``unity`` at 1.
    public static func gain(linear volume: Float) -> Int32 {
        Int32((Double(min(max(volume, 0), 1)) * Double(unity)).rounded())
    }

    /// The gain for a mixer setting of `percent`.
    public static func gain(percent: Int) -> Int32 { gain(linear: linearVolume(percent: percent)) }

    /// Two gains applied one after the other (the volume and an item's own), as one: exactly
    /// the other when one is unity, so two unities stay unity and the output bit-exact.
    public static func combine(_ first: Int32, _ second: Int32) -> Int32 {
        if first == unity { return second }
        if second == unity { return first }
        return Int32(clamping: (Int64(first) * Int64(second) + 512) >> 10)
    }

    /// Scales `samples` in place by `gain` / 1024, rounding to nearest and clamping to the
    /// 16-bit range. Does nothing at unity gain.
    public static func apply(gain: Int32, to samples: UnsafeMutableBufferPointer<Int16>) {
        guard gain != unity else { return }
        for index in samples.indices {
            let scaled = (Int64(samples[index]) * Int64(gain) + 512) >> 10
            samples[index] = Int16(clamping: scaled)
        }
    }
}
