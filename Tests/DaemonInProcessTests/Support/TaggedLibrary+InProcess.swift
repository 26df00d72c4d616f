import DaemonCore
import Foundation
import TestSupport

extension TaggedLibrary {
    /// A daemon over the music directory, once its song database lists `songs` files; `configure`
    /// is applied after `--music-directory` and `--sticker-file off`.
    func inProcessDaemon(songs: Int = 4, _ configure: (inout DaemonOptions) throws -> Void = { _ in }) throws -> InProcessDaemon {
        // Without stickers: the tests check the refusal mpd gives without a sticker_file
        // (StickerDaemonTests has them on).
        let daemon = try InProcessDaemon { options in
            options.musicDirectory = music.path
            options.stickerFile = .off
            try configure(&options)
        }
        let listed = waitUntil(timeout: 20) {
            let files = (try? daemon.client().request("listall"))?.filter { $0.hasPrefix("file: ") }
            return files?.count == songs
        }
        guard listed else {
            daemon.stop()
            throw UnixSocketError("the song database did not list \(songs) songs within 20 s")
        }
        return daemon
    }
}
