import MPDProtocol
import QueuePlayer

/// Playback and its options: `play`, `pause`, `seek`, `status`, `repeat`, `random`, ...
/// (MPD's `PlayerCommands.cxx`).
///
/// Commands that act on the player wake a suspended daemon once their arguments and the
/// player's state allow them, as a remote command wakes a suspended app.
struct PlayerCommands: CommandHandler {
    unowned let controller: PlaybackController

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        let controller = controller
        let player = controller.player
        switch command {
        case .play(let position):
            try play(position)
        case .playid(let id):
            try play(try id.map { id throws(MPDError) in try controller.position(ofID: id) })
        case .pause(let flag):
            guard controller.playState != .stop else { return .empty }
            controller.application.commandNeedsPlayer()
            let pause = flag ?? (controller.playState == .play)
            if pause { player.pause() } else if controller.outputEnabled { player.play() }
        case .next:
            try controller.next()
        case .previous:
            try controller.previous()
        case .stop:
            controller.application.commandNeedsPlayer()
            controller.stop()
        case .seekcur(let target):
            guard controller.playState != .stop, let position = controller.currentPosition else { throw MPDError.notPlaying }
            try controller.seek(position: position, seconds: max(0, target.seconds(from: player.currentTime().seconds)))
        case .seek(let position, let seconds):
            try controller.seek(position: position, seconds: seconds)
        case .seekid(let id, let seconds):
            try controller.seek(position: try controller.position(ofID: id), seconds: seconds)
        case .status:
            return controller.reply(keeping: .status) { StatusReport(controller: controller).reply() }
        case .currentsong:
            return controller.reply(keeping: .currentSong) {
                guard let position = controller.selectedPosition else { return .empty }
                var reply = Reply()
                reply.append(controller.songInfo(at: position))
                return reply
            }
        case .repeat(let on):
            controller.setModes { $0.setRepeat(on) }
        case .random(let on):
            let playing = controller.playState != .stop
            controller.setModes { $0.setRandom(on, keepingCurrent: playing) }
        case .single(let mode):
            controller.setModes { $0.setSingle(mode) }
        case .consume(let mode):
            controller.setModes { $0.setConsume(mode) }
        case .crossfade(let seconds):
            guard seconds == 0 else { throw MPDError(.argument, "Cross-fading is not supported: queueplayerd is gapless") }
        case .mixrampdb(let decibels):
            controller.mixrampdb = decibels
            controller.events.post([.options])
        case .mixrampdelay(let seconds):
            // MixRamp needs cross-fading; only "off" (nan, or a negative delay) can be honoured.
            if let seconds, seconds >= 0 { throw MPDError(.argument, "MixRamp is not supported: queueplayerd is gapless") }
        case .replayGainMode(let mode):
            guard mode == "off" else {
                throw mode == "track" || mode == "album" || mode == "auto"
                    ? MPDError(.argument, "Replay gain is not supported")
                    : MPDError(.argument, "Unrecognized replay gain mode")
            }
        case .replayGainStatus:
            var reply = Reply()
            reply.append("replay_gain_mode", "off")
            return reply
        case .setvol(let percent):
            controller.setVolume(percent)
        case .volume(let change):
            controller.setVolume(min(max(controller.volume + change, 0), 100))
        case .getvol:
            var reply = Reply()
            reply.append("volume", controller.volume)
            return reply
        default:
            return nil
        }
        return .empty
    }

    private func play(_ position: Int?) throws(MPDError) {
        let controller = controller
        if let position {
            guard position >= 0, position < controller.playQueue.count else { throw MPDError.badSongIndex }
            controller.application.commandNeedsPlayer()
            controller.startPlayback(at: position)
            return
        }
        switch controller.playState {
        case .play: return
        case .pause:
            controller.application.commandNeedsPlayer()
            if controller.outputEnabled { controller.player.play() }
        case .stop:
            guard !controller.playQueue.isEmpty else { return }
            controller.application.commandNeedsPlayer()
            // The current song, or the first in play order (in random mode, a random one).
            guard let position = controller.selectedPosition ?? controller.playQueue.firstPosition else { return }
            controller.startPlayback(at: min(position, controller.playQueue.count - 1))
        }
    }
}
