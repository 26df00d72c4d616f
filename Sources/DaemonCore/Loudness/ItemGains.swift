import QueuePlayer
import Synchronization

/// The partition's gain settings: the ReplayGain mode clients set (`replay_gain_mode`), the
/// settings it started with, and the measurements known (``LoudnessStore``); it tells the
/// player the policy (``QueuePlayer/gainPolicy``) whenever the mode, or the queue's random
/// mode that `auto` follows, changes.
///
/// `Sendable` through its mutex; the player's policy is set outside it.
final class ItemGains: Sendable {
    private struct State {
        var options = LoudnessOptions()
        var mode = ReplayGainMode.off
        var random = false
    }

    private let player: QueuePlayer
    private let state = Mutex(State())

    init(player: QueuePlayer) {
        self.player = player
    }

    /// The mode `replay_gain_status` reports.
    var mode: ReplayGainMode { state.withLock { $0.mode } }

    /// The settings the daemon started with; the mode is the setting's until a client's or the
    /// saved state's.
    func configure(_ options: LoudnessOptions, measurements: LoudnessStore?) {
        state.withLock {
            $0.options = options
            $0.mode = options.mode
        }
        if let measurements {
            player.loudnessLookup = { url in measurements.measurement(of: url) }
        }
        apply()
    }

    func setMode(_ mode: ReplayGainMode) {
        state.withLock { $0.mode = mode }
        apply()
    }

    /// The queue's random mode: `auto` plays track gain at random, album gain in order.
    func queueRandomChanged(_ random: Bool) {
        let changed = state.withLock { state in
            defer { state.random = random }
            return state.random != random
        }
        if changed { apply() }
    }

    private func apply() {
        let policy = state.withLock { $0.options.policy(mode: $0.mode, random: $0.random) }
        if player.gainPolicy != policy { player.gainPolicy = policy }
    }
}
