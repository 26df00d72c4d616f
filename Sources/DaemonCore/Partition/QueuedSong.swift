import Foundation
import MPDProtocol
import QueuePlayer

/// A song in the play queue: its file, its URI in the music directory, and what the file
/// says about itself (read once, when it was added).
struct QueuedSong: Sendable, FilterableSong {
    let url: URL
    let uri: String
    /// Tags, length and format; nil if the file could not be opened as MP3 when added.
    let details: SongDetails?
    let lastModified: Int64?

    init(url: URL, library: MusicLibrary, index: SongIndex) {
        self.url = url
        uri = library.uri(for: url)
        details = index.details(of: url)
        lastModified = FileIdentity(path: url.path).map { $0.modified / 1_000_000_000 }
    }

    var tags: [SongInfo.Tag] { details?.tags ?? [] }

    var audioFormat: String? { details?.formatText }

    /// The song block (`file`, tags, `Time`, ...) without queue fields.
    var info: SongInfo {
        SongInfo(file: uri, lastModified: lastModified, format: audioFormat,
                 tags: tags, duration: details?.duration)
    }
}
