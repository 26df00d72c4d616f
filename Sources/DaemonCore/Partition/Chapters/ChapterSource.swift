import Feeds
import Foundation
import Logging
import MPDProtocol
import QueuePlayer

/// Where a song's chapters come from: a podcast episode's chapters file kept beside it
/// (``Feeds/ChaptersFile``, the `podcast:chapters` JSON the downloads fetched), else the file's
/// own ID3v2 `CHAP` frames (read by the player when it opens the file, or here for a song
/// that is not playing). What is wrong with either is logged as a warning naming the file,
/// and the song plays all the same.
enum ChapterSource {
    /// The chapters of the episode's chapters file beside `url`; nil if there is none, or
    /// none usable (logged). At most ``QueuePlayer/PodcastChapters/maximumSize`` bytes are read.
    static func episodeChapters(of url: URL, logger: Logger) -> [Chapter]? {
        guard url.isFileURL else { return nil }
        let file = ChaptersFile.url(forEpisode: url)
        // A plain file only: a FIFO or a directory by that name is not opened.
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
              attributes[.type] as? FileAttributeType == .typeRegular else { return nil }
        do {
            let result = try PodcastChapters.read(file)
            if result.skipped > 0 {
                logger.warning("chapters file \(file.path): \(result.skipped) entries without a usable startTime (or hidden) ignored")
            }
            return result.chapters.isEmpty ? nil : result.chapters
        } catch {
            logger.warning("chapters file \(file.path) ignored: \(error)")
            return nil
        }
    }

    /// A player item for `song` with its episode chapters given, if it has any.
    static func item(for song: QueuedSong, logger: Logger) -> PlayerItem {
        let item = song.makeItem()
        if !song.isStream, let chapters = episodeChapters(of: song.url, logger: logger) {
            if song.range.isWhole {
                item.setChapters(chapters)
            } else {
                // In the item's time, as the file's own are made for a clip.
                item.setChapters(chapters.map { chapter in
                    var moved = chapter
                    moved.start -= song.range.start
                    moved.end -= song.range.start
                    return moved
                })
            }
        }
        return item
    }

    /// The chapters of a song that is not (necessarily) playing: its episode chapters, else
    /// its ID3 frames; normalized to `duration`.
    static func chapters(of url: URL, duration: Double?, logger: Logger) -> [Chapter] {
        if let given = episodeChapters(of: url, logger: logger) { return Chapter.normalized(given, duration: duration) }
        let read = ID3Chapters.read(url)
        for problem in read.problems { logger.warning("chapters of \(url.path): \(problem); skipped") }
        return Chapter.normalized(read.chapters, duration: duration)
    }
}
