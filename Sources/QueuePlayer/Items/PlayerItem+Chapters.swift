import Foundation
import Synchronization

/// An item's chapters and where they came from.
struct ChapterState: Sendable {
    /// Normalized, in the item's time.
    var chapters: [Chapter] = []
    /// Set by ``PlayerItem/setChapters(_:)``: the file's own are not read.
    var given: [Chapter]?
    /// True once the file's chapters were read (or given ones fitted to the duration).
    var loaded = false
    var problems: [String] = []
}

extension PlayerItem {
    /// The item's chapters (`AVAsset.chapterMetadataGroups`, kept simple): sorted by start,
    /// apart, within the item (see ``Chapter/normalized(_:duration:)``). A file's `CHAP` frames
    /// are read when the player first opens it; until then this is empty, or what
    /// ``setChapters(_:)`` gave. Observable.
    public var chapters: [Chapter] { chapterState.withLock { $0.chapters } }

    /// What was wrong with the file's chapter frames, one line each (empty if nothing):
    /// they were skipped, the item plays.
    public var chapterProblems: [String] { chapterState.withLock { $0.problems } }

    /// Gives the item chapters from elsewhere (a podcast episode's chapters file): they are
    /// the item's in place of its file's, normalized now and fitted to its duration when it
    /// is known. Observable through ``chapters``.
    public func setChapters(_ chapters: [Chapter]) {
        let duration = self.duration?.seconds
        let normalized = Chapter.normalized(chapters, duration: duration)
        observationRegistry.change(\PlayerItem.chapters) {
            chapterState.withLock { state in
                state.given = chapters
                state.chapters = normalized
                state.loaded = duration != nil
            }
        }
    }

    /// The index in ``chapters`` of the chapter that holds `time` (the item's), nil if none does.
    public func chapterIndex(at time: MediaTime) -> Int? {
        Chapter.index(at: time.seconds, in: chapters)
    }

    /// Reads the file's chapters (or fits given ones) once the decoder tells the duration.
    func loadChapters(of decoder: any Decoder) {
        let (given, loaded) = chapterState.withLock { ($0.given, $0.loaded) }
        guard !loaded else { return }
        let rate = decoder.format.sampleRate
        let duration = decoder.knownFrameCount.map { Double($0) / Double(max(1, rate)) }
        var problems: [String] = []
        let normalized: [Chapter]
        if let given {
            normalized = Chapter.normalized(given, duration: duration)
        } else {
            let read = ID3Chapters.read(url)
            problems = read.problems
            let offset = clip?.start.seconds ?? 0
            let shifted = read.chapters.map { chapter in
                var moved = chapter
                moved.start -= offset
                moved.end -= offset
                return moved
            }
            normalized = Chapter.normalized(shifted, duration: duration)
        }
        observationRegistry.change(\PlayerItem.chapters) {
            chapterState.withLock { state in
                state.chapters = normalized
                state.problems = problems
                state.loaded = true
            }
        }
    }
}
