/// How an item is played at a rate other than 1: `AVAudioTimePitchAlgorithm`'s names.
///
/// Both are Sonic's (``TimeStretcher``). AVFoundation's third, `.spectral` (a phase vocoder,
/// for music), has no counterpart: Sonic has one time-domain algorithm (its quality flag only
/// widens its pitch search), and no other stretcher is linked.
public enum AudioTimePitchAlgorithm: UInt8, Sendable, Hashable, CaseIterable {
    /// The pitch is kept: Sonic's pitch-synchronous overlap-add, made for speech. The default.
    case timeDomain
    /// The pitch follows the rate, as a tape played faster (Sonic's resampler).
    case varispeed
}
