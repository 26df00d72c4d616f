import Foundation
import MPDProtocol
import QueuePlayer

/// A song in the play queue: its file, its URI in the music directory, and what the file
/// says about itself (read once, when it was added); or a stream, its URL and nothing more
/// (its name and title come from the item playing it).
struct QueuedSong: Sendable, FilterableSong {
    let url: URL
    let uri: String
    /// Tags, length and format; nil if the file could not be opened as MP3 when added.
    let details: SongDetails?
    let lastModified: Int64?

    init(url: URL, library: MusicLibrary, index: SongIndex) {
        self.url = url
        // A stream is shown by its URL (mpd's `file: http://…`) and knows nothing until it plays.
        guard !StreamURL.isNetwork(url) else {
            uri = url.absoluteString
            details = nil
            lastModified = nil
            return
        }
        uri = library.uri(for: url)
        details = index.details(of: url)
        lastModified = FileIdentity(path: url.path).map { $0.modified / 1_000_000_000 }
    }

    var tags: [SongInfo.Tag] { details?.tags ?? [] }

    /// Whether this is a stream (`http(s)://`), not a file.
    var isStream: Bool { StreamURL.isNetwork(url) }

    var audioFormat: String? { details?.formatText }

    /// The song block (`file`, tags, `Time`, ...) without queue fields.
    var info: SongInfo {
        SongInfo(file: uri, lastModified: lastModified, format: audioFormat,
                 tags: tags, duration: details?.duration)
    }
}
