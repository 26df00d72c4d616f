#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One chapter of an item: a titled span of its time, as `AVAsset.chapterMetadataGroups`
/// gives them (a time range and its metadata), kept to what a player shows.
///
/// The times are the item's, in seconds (an item with a ``PlayerItem/Clip`` counts from the
/// clip's start). Chapters come from the file's ID3v2 `CHAP` frames (``ID3Chapters``) or from
/// a podcast episode's chapters JSON (``PodcastChapters``), and are always
/// ``normalized(_:duration:)``: sorted, apart, within the item, at most ``maximumCount``.
public struct Chapter: Sendable, Hashable {
    /// Where a chapter's picture is.
    public enum Picture: Sendable, Hashable {
        /// An `APIC` frame inside the chapter's `CHAP` frame: read it as the file's own picture.
        case embedded(ID3Picture)
        /// An image on the web (a podcast chapter's `img`).
        case remote(URL)
    }

    public var title: String
    /// Where the chapter starts, in seconds of the item.
    public var start: Double
    /// Where it ends (the next one's start at the latest), in seconds of the item.
    public var end: Double
    /// A web page about the chapter (ID3's `WXXX`, a podcast chapter's `url`).
    public var url: URL?
    public var picture: Picture?

    public init(title: String, start: Double, end: Double, url: URL? = nil, picture: Picture? = nil) {
        self.title = title
        self.start = start
        self.end = end
        self.url = url
        self.picture = picture
    }

    // MARK: - Bounds

    /// At most this many chapters are kept (the first ones by start time): a real episode
    /// has tens, a hostile file may claim a hundred thousand.
    public static let maximumCount = 1_000
    /// A title is cut to this many characters, a URL of more UTF-8 bytes is dropped.
    public static let maximumTitleLength = 1_024
    public static let maximumURLLength = 2_048

    /// The chapters as a player can use them, whatever their source claimed: those with a
    /// start that is not a finite number are dropped; the rest sorted by start (the source's
    /// order among equal starts), each ending at the next one's start at the latest (no
    /// overlap), none past `duration` (when known) nor before 0; empty ones dropped; at most
    /// ``maximumCount``. A chapter without an end (`end` not finite) ends where the next starts,
    /// or at `duration`.
    public static func normalized(_ chapters: [Chapter], duration: Double?) -> [Chapter] {
        var sorted = chapters.enumerated()
            .filter { $0.element.start.isFinite }
            .sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }
            .map(\.element)
        if sorted.count > maximumCount * 2 { sorted.removeLast(sorted.count - maximumCount * 2) }
        let limit = duration.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? .infinity
        var result: [Chapter] = []
        for (index, chapter) in sorted.enumerated() {
            var kept = chapter
            kept.start = max(0, kept.start)
            let next = index + 1 < sorted.count ? sorted[index + 1].start : .infinity
            let stated = kept.end.isFinite ? kept.end : .infinity
            kept.end = min(stated, next, limit)
            guard kept.end.isFinite, kept.end > kept.start else { continue }
            if kept.title.count > maximumTitleLength { kept.title = String(kept.title.prefix(maximumTitleLength)) }
            result.append(kept)
            if result.count == maximumCount { break }
        }
        return result
    }

    /// The index of the chapter that holds `time` in `chapters` (sorted and apart, as
    /// ``normalized(_:duration:)`` makes them); nil before the first, in a gap or after the last.
    public static func index(at time: Double, in chapters: [Chapter]) -> Int? {
        // The last chapter starting at or before `time` (binary search), if `time` is before its end.
        var low = 0, high = chapters.count
        while low < high {
            let middle = (low + high) / 2
            if chapters[middle].start <= time { low = middle + 1 } else { high = middle }
        }
        guard low > 0, time < chapters[low - 1].end else { return nil }
        return low - 1
    }
}
