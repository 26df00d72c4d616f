import Foundation
import MPDProtocol
import Stickers

/// The sleep timer and the items kept part-heard (not mpd's): `sleep SECONDS|end|chapter|off`
/// (``SleepTimer``) and `inprogress`, the `elapsed` stickers the daemon keeps
/// (``PlaybackMemory``): for each, `file`, `elapsed` and, for a song the library has, `duration`.
struct SleepCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .sleep, .inprogress,
    ]

    let playback: any PlaybackControl
    let application: any ApplicationContext
    let songIndex: SongIndex
    let library: MusicLibrary

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        switch command {
        case .sleep(let request):
            if request != .off { application.commandNeedsPlayer() }
            try playback.setSleep(request)
            return .empty
        case .inprogress:
            var reply = Reply()
            guard let memory = playback.memory else { return reply }
            let kept: [(uri: String, elapsed: Double)]
            do throws(StickerStoreError) {
                kept = try memory.inProgress()
            } catch {
                throw MPDError(.unknown, "sticker database: \(error.description)")
            }
            for (uri, elapsed) in kept {
                reply.append("file", uri)
                reply.append("elapsed", seconds: elapsed)
                if let duration = duration(of: uri) { reply.append("duration", seconds: duration) }
            }
            return reply
        default:
            return nil
        }
    }

    /// The length of the song at `uri`, if the library knows it.
    private func duration(of uri: String) -> Double? {
        guard let url = library.path(of: uri) else { return nil }
        return songIndex.details(of: url)?.duration
    }
}
