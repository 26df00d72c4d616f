import QueuePlayer

/// mpd's `replay_gain_mode`: off, track, album, or auto (album while the queue plays in
/// order, track while it plays at random).
public enum ReplayGainMode: String, Sendable, CaseIterable {
    case off, track, album, auto

    /// The values, as an ACK or a setting's refusal names them.
    static let valueList = allCases.map(\.rawValue).joined(separator: ", ")

    /// The mode the player applies: `auto` resolved by the queue's random mode.
    func resolved(random: Bool) -> GainPolicy.Mode {
        switch self {
        case .off: .off
        case .track: .track
        case .album: .album
        case .auto: random ? .track : .album
        }
    }
}

/// The gain settings the daemon started with (`replaygain`, `replaygain-preamp`,
/// `replaygain-missing-preamp`, `replaygain-limit`, `loudness-target`).
public struct LoudnessOptions: Sendable, Hashable {
    public var mode: ReplayGainMode = .off
    public var preamp = 0.0
    public var missingPreamp = 0.0
    public var limit = true
    /// LUFS; nil: off.
    public var target: Double?

    public init() {}

    /// The player's policy in `mode`, with the queue's random mode for `auto`.
    func policy(mode: ReplayGainMode, random: Bool) -> GainPolicy {
        GainPolicy(mode: mode.resolved(random: random), preamp: preamp, missingPreamp: missingPreamp, limit: limit,
                   loudnessTarget: target)
    }
}
