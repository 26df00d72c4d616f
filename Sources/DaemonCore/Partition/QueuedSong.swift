#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MPDProtocol
import QueuePlayer

/// A song in the play queue: its file, its URI in the music directory, and what the file
/// says about itself (read once, when it was added); or a stream, its URL and the tags clients
/// gave it (`addtagid`; its name and title come from the item playing it).
package struct QueuedSong: Sendable, FilterableSong {
    let url: URL
    package let uri: String
    /// Tags, length and format; nil if the file could not be opened as MP3 when added.
    let details: SongDetails?
    package let lastModified: Int64?
    /// The part that plays (`rangeid`); the whole song by default.
    var range = SongTimeRange.whole
    /// A stream's tags as clients edited them (`addtagid`, `cleartagid`); a file's tags are
    /// the file's own and never edited.
    var editedTags: [SongInfo.Tag] = []

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

    package var tags: [SongInfo.Tag] { details?.tags ?? editedTags }

    /// A player item for the song: its range, if it has one, is the item's clip.
    func makeItem() -> PlayerItem {
        guard !range.isWhole else { return PlayerItem(url: url) }
        return PlayerItem(url: url, clip: .init(start: MediaTime(seconds: range.start),
                                                end: range.end.map { MediaTime(seconds: $0) }))
    }
    /// Whether this is a stream (`http(s)://`), not a file.
    var isStream: Bool { StreamURL.isNetwork(url) }

    package var audioFormat: String? { details?.formatText }

    /// The song block (`file`, `Range`, tags, `Time`, ...) without queue fields. With a
    /// range, `Time` and `duration` are the range's length, as MPD's `GetDuration` gives them.
    var info: SongInfo {
        var info = SongInfo(file: uri, lastModified: lastModified, format: audioFormat,
                            tags: tags, duration: details.map { playedDuration(of: $0.duration) })
        info.range = range.isWhole ? nil : range
        return info
    }

    /// How long the range of a song of `duration` seconds lasts.
    private func playedDuration(of duration: Double) -> Double {
        max(0, (range.end ?? duration) - range.start)
    }
}
