#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MPDProtocol
import QueuePlayer
import Synchronization

/// Tags, length and format of a file, for song blocks of songs not yet played.
struct SongDetails: Sendable {
    /// The tags as MPD names them, in the order song blocks list them.
    let tags: [SongInfo.Tag]
    let duration: Double
    let format: AudioFormat

    /// `samplerate:bits:channels`, as `Format:` shows it.
    var formatText: String { "\(format.sampleRate):16:\(format.channelCount)" }

    /// Reads them from the file; nil if it cannot be opened as MP3.
    init?(reading url: URL) {
        guard let decoder = try? MPG123Decoder(url: url) else { return nil }
        tags = ID3TagMapping.tags(of: decoder.id3)
        duration = Double(decoder.frameCount) / Double(decoder.format.sampleRate)
        format = decoder.format
    }
}

/// What `update` learned about the library's files, so `add` need not open them
/// again: details by path, valid while the file is the same version (``FileIdentity``:
/// device, inode, size, modification and change times, as the decoder's scan cache has it).
package final class SongIndex: Sendable {
    package init() {}

    /// Details by path, with the version they were read from (nil: the file could not be read).
    private let entries = Mutex<[String: (version: FileIdentity?, details: SongDetails?)]>([:])

    /// The details of `url`, read now unless the index holds them for its current version.
    func details(of url: URL) -> SongDetails? {
        let version = FileIdentity(path: url.path)
        if let known = entries.withLock({ $0[url.path] }), known.version == version { return known.details }
        let details = SongDetails(reading: url)
        entries.withLock { $0[url.path] = (version, details) }
        return details
    }

    /// Reads the details of every file not yet known in its current version, until
    /// `isCancelled` turns true. Returns how many files were looked at.
    func refresh(_ urls: [URL], isCancelled: () -> Bool) -> Int {
        var done = 0
        for url in urls {
            if isCancelled() { break }
            _ = details(of: url)
            done += 1
        }
        let present = Set(urls.map(\.path))
        if done == urls.count { entries.withLock { $0 = $0.filter { present.contains($0.key) } } }
        return done
    }
}
