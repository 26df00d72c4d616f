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
    let playback: any PlaybackControl
    /// The life cycle a command that needs the player wakes.
    let application: any ApplicationContext
    /// What `status` reports of the rest of the daemon.
    let status: StatusReport.Sources
    let events: ControlEvents

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        let playback = playback
        let player = playback.player
        switch command {
        case .play(let position):
            try play(position)
        case .playid(let id):
            try play(try id.map { id throws(MPDError) in try playback.position(ofID: id) })
        case .pause(let flag):
            guard playback.playState != .stop else { return .empty }
            application.commandNeedsPlayer()
            let pause = flag ?? (playback.playState == .play)
            if pause {
                playback.cancelSleep()
                player.pause()
            } else if playback.outputEnabled {
                player.play()
            }
        case .next:
            try playback.next()
        case .previous:
            try playback.previous()
        case .stop:
            application.commandNeedsPlayer()
            playback.stop(reshuffling: true)
        case .seekcur(let target):
            guard playback.playState != .stop, let position = playback.currentPosition else { throw MPDError.notPlaying }
            try playback.seek(position: position, seconds: max(0, target.seconds(from: player.currentTime().seconds)))
        case .clearerror:
            // MPD's `PlayerControl::ClearError`: the error is forgotten, no idle event. An
            // output that cannot open says so again on its next attempt, as in MPD.
            playback.lastError = nil
        case .seek(let position, let seconds):
            try playback.seek(position: position, seconds: seconds)
        case .seekid(let id, let seconds):
            try playback.seek(position: try playback.position(ofID: id), seconds: seconds)
        case .status:
            return playback.reply(keeping: .status) { StatusReport(playback: playback, sources: status).reply() }
        case .currentsong:
            return playback.reply(keeping: .currentSong) {
                guard let position = playback.selectedPosition else { return .empty }
                var reply = Reply()
                reply.append(playback.songInfo(at: position))
                return reply
            }
        case .repeat(let on):
            playback.setModes { $0.setRepeat(on) }
        case .random(let on):
            let playing = playback.playState != .stop
            playback.setModes { $0.setRandom(on, keepingCurrent: playing) }
        case .single(let mode):
            playback.setModes { $0.setSingle(mode) }
        case .consume(let mode):
            playback.setModes { $0.setConsume(mode) }
        case .crossfade(let seconds):
            guard seconds == 0 else { throw MPDError(.argument, "Cross-fading is not supported: queueplayerd is gapless") }
        case .mixrampdb(let decibels):
            playback.mixrampdb = decibels
            events.post([.options])
        case .mixrampdelay(let seconds):
            // MixRamp needs cross-fading; only "off" (nan, or a negative delay) can be honoured.
            if let seconds, seconds >= 0 { throw MPDError(.argument, "MixRamp is not supported: queueplayerd is gapless") }
        case .setvol(let percent):
            playback.setVolume(percent)
        case .volume(let change):
            playback.setVolume(min(max(playback.volume + change, 0), 100))
        case .getvol:
            var reply = Reply()
            reply.append("volume", playback.volume)
            return reply
        default:
            return nil
        }
        return .empty
    }

    private func play(_ position: Int?) throws(MPDError) {
        let playback = playback
        if let position {
            guard position >= 0, position < playback.playQueue.count else { throw MPDError.badSongIndex }
            application.commandNeedsPlayer()
            playback.startPlayback(at: position, from: playback.resumePoint(at: position), paused: false)
            return
        }
        switch playback.playState {
        case .play: return
        case .pause:
            application.commandNeedsPlayer()
            if playback.outputEnabled { playback.player.play() }
        case .stop:
            guard !playback.playQueue.isEmpty else { return }
            application.commandNeedsPlayer()
            // The current song, or the first in play order (in random mode, a random one).
            guard let position = playback.selectedPosition ?? playback.playQueue.firstPosition else { return }
            let at = min(position, playback.playQueue.count - 1)
            playback.startPlayback(at: at, from: playback.resumePoint(at: at), paused: false)
        }
    }
}
