import Logging
import MPDProtocol
import QueuePlayer
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Chapters on the control socket (not mpd's): `chapters [URI]` lists a song's chapters,
/// `seekchapter N|next|previous` moves to one in the current song. The chapters are the
/// player item's (``QueuePlayer/PlayerItem/chapters``: an episode's chapters file, else the
/// file's `CHAP` frames), in the item's time.
///
/// Confined to the partition's queue, as every handler is.
struct ChapterCommands: CommandHandler {
    static let kinds: [Command.Kind] = [.chapters, .seekchapter]

    /// Within this many seconds of a chapter's start, `seekchapter previous` goes to the
    /// chapter before (a player's back button); later, to the chapter's own start.
    static let previousGrace = 3.0

    let playback: any PlaybackControl
    let library: MusicLibrary
    let songIndex: SongIndex
    let logger: Logger

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        switch command {
        case .chapters(let uri):
            let chapters: [Chapter]
            if let uri {
                chapters = try self.chapters(of: uri, isLocal: context.isLocal)
            } else {
                chapters = playback.playState == .stop ? [] : playback.player.currentItem?.chapters ?? []
            }
            return Self.reply(chapters)
        case .seekchapter(let target):
            try seek(to: target)
            return Reply()
        default:
            return nil
        }
    }

    /// One block per chapter: `chapter: N` (from 1), `start`, `end`, `title`, and `url` when given.
    static func reply(_ chapters: [Chapter]) -> Reply {
        var reply = Reply()
        for (index, chapter) in chapters.enumerated() {
            reply.append("chapter", index + 1)
            reply.append("start", seconds: chapter.start)
            reply.append("end", seconds: chapter.end)
            reply.append("title", Self.oneLine(chapter.title))
            if let url = chapter.url { reply.append("url", url.absoluteString) }
        }
        return reply
    }

    /// A title as one protocol line: a line break in it would end the field.
    private static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }

    /// The chapters of the song at `uri`: a queued song's (a podcast episode outside the
    /// library included), else a library file's.
    private func chapters(of uri: String, isLocal: Bool) throws(MPDError) -> [Chapter] {
        if let entry = playback.playQueue.entries.first(where: { $0.song.uri == uri }), !entry.song.isStream {
            return ChapterSource.chapters(of: entry.song.url, duration: entry.song.details?.duration, logger: logger)
        }
        if uri.hasPrefix("/") && !isLocal { throw MPDError(.permission, "Access denied") }
        guard let path = library.path(of: uri) else { throw MPDError(.permission, "Access denied") }
        let song = path.resolvingSymlinksInPath().standardizedFileURL
        guard library.contains(song) else { throw MPDError(.permission, "Access denied") }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: song.path),
              attributes[.type] as? FileAttributeType == .typeRegular else { throw MPDError(.noExist, "No such file") }
        return ChapterSource.chapters(of: song, duration: songIndex.details(of: song)?.duration, logger: logger)
    }

    private func seek(to target: ChapterTarget) throws(MPDError) {
        guard playback.playState != .stop, let position = playback.currentPosition,
              let item = playback.player.currentItem else { throw MPDError.notPlaying }
        let chapters = item.chapters
        guard !chapters.isEmpty else { throw MPDError(.argument, "the current song has no chapters") }
        let now = playback.player.currentTime().seconds
        // The last chapter started by now (in a gap: the one before it); nil before the first.
        let started = chapters.lastIndex { $0.start <= now }
        let index: Int
        switch target {
        case .number(let number):
            guard number <= chapters.count else {
                throw MPDError(.argument, "No chapter \(number): the current song has \(Self.count(chapters.count))")
            }
            index = number - 1
        case .next:
            let next = started.map { $0 + 1 } ?? 0
            guard next < chapters.count else {
                throw MPDError(.argument, "No chapter after chapter \(chapters.count), the last of \(Self.count(chapters.count))")
            }
            index = next
        case .previous:
            guard let started else { index = 0; break }
            index = now - chapters[started].start < Self.previousGrace ? max(0, started - 1) : started
        }
        try playback.seek(position: position, seconds: chapters[index].start)
    }

    private static func count(_ count: Int) -> String { count == 1 ? "1 chapter" : "\(count) chapters" }
}
