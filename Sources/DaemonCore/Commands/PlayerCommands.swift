import MPDProtocol
import QueuePlayer

/// Playback and its options: `play`, `pause`, `seek`, `status`, `repeat`, `random`, ...
/// (MPD's `PlayerCommands.cxx`).
///
/// Commands that act on the player wake a suspended daemon once their arguments and the
/// player's state allow them, as a remote command wakes a suspended app.
struct PlayerCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .play, .playid, .pause, .next, .previous, .stop, .seekcur, .clearerror, .seek, .seekid, .status,
        .currentsong, .repeat, .random, .single, .consume, .crossfade, .mixrampdb, .mixrampdelay,
        .setvol, .volume, .getvol,
    ]

    /// The partition's player side.
    let partition: any PlaybackControl
    /// The life cycle a command that needs the player wakes.
    let application: any ApplicationContext
    /// What `status` reports of the rest of the daemon.
    let status: StatusReport.Sources
    let events: ControlEvents

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        let partition = partition
        let player = partition.player
        switch command {
        case .play(let position):
            try play(position)
        case .playid(let id):
            try play(try id.map { id throws(MPDError) in try partition.position(ofID: id) })
        case .pause(let flag):
            guard partition.playState != .stop else { return .empty }
            application.commandNeedsPlayer()
            let pause = flag ?? (partition.playState == .play)
            if pause {
                partition.cancelSleep()
                player.pause()
            } else if partition.outputEnabled {
                player.play()
            }
        case .next:
            try partition.next()
        case .previous:
            try partition.previous()
        case .stop:
            application.commandNeedsPlayer()
            partition.stop(reshuffling: true)
        case .seekcur(let target):
            guard partition.playState != .stop, let position = partition.currentPosition else { throw MPDError.notPlaying }
            try partition.seek(position: position, seconds: max(0, target.seconds(from: player.currentTime().seconds)))
        case .clearerror:
            // MPD's `PlayerControl::ClearError`: the error is forgotten, no idle event. An
            // output that cannot open says so again on its next attempt, as in MPD.
            partition.lastError = nil
        case .seek(let position, let seconds):
            try partition.seek(position: position, seconds: seconds)
        case .seekid(let id, let seconds):
            try partition.seek(position: try partition.position(ofID: id), seconds: seconds)
        case .status:
            return partition.reply(keeping: .status) { StatusReport(partition: partition, sources: status).reply() }
        case .currentsong:
            return partition.reply(keeping: .currentSong) {
                guard let position = partition.selectedPosition else { return .empty }
                var reply = Reply()
                reply.append(partition.songInfo(at: position))
                return reply
            }
        case .repeat(let on):
            partition.setModes { $0.setRepeat(on) }
        case .random(let on):
            let playing = partition.playState != .stop
            partition.setModes { $0.setRandom(on, keepingCurrent: playing) }
        case .single(let mode):
            partition.setModes { $0.setSingle(mode) }
        case .consume(let mode):
            partition.setModes { $0.setConsume(mode) }
        case .crossfade(let seconds):
            guard seconds == 0 else { throw MPDError(.argument, "Cross-fading is not supported: queueplayerd is gapless") }
        case .mixrampdb(let decibels):
            partition.mixrampdb = decibels
            events.post([.options])
        case .mixrampdelay(let seconds):
            // MixRamp needs cross-fading; only "off" (nan, or a negative delay) can be honoured.
            if let seconds, seconds >= 0 { throw MPDError(.argument, "MixRamp is not supported: queueplayerd is gapless") }
        case .setvol(let percent):
            partition.setVolume(percent)
        case .volume(let change):
            partition.setVolume(min(max(partition.volume + change, 0), 100))
        case .getvol:
            var reply = Reply()
            reply.append("volume", partition.volume)
            return reply
        default:
            return nil
        }
        return .empty
    }

    private func play(_ position: Int?) throws(MPDError) {
        let partition = partition
        if let position {
            guard position >= 0, position < partition.playQueue.count else { throw MPDError.badSongIndex }
            application.commandNeedsPlayer()
            partition.startPlayback(at: position, from: partition.resumePoint(at: position), paused: false)
            return
        }
        switch partition.playState {
        case .play: return
        case .pause:
            application.commandNeedsPlayer()
            if partition.outputEnabled { partition.player.play() }
        case .stop:
            guard !partition.playQueue.isEmpty else { return }
            application.commandNeedsPlayer()
            // The current song, or the first in play order (in random mode, a random one).
            guard let position = partition.selectedPosition ?? partition.playQueue.firstPosition else { return }
            let at = min(position, partition.playQueue.count - 1)
            partition.startPlayback(at: at, from: partition.resumePoint(at: at), paused: false)
        }
    }
}
