import Foundation
@testable import QueuePlayer
import TestSupport
import Testing

/// Chapters (``ID3Chapters``, ``PodcastChapters``, ``Chapter/normalized(_:duration:)``,
/// ``PlayerItem/chapters``): written by mutagen on a real MP3, and hostile tags and JSON built
/// by hand, which cost bounded time and memory and leave the file playable.
@Suite struct ChapterTests {
    static let entries = [
        ChapterFixtures.Entry(id: "ch0", start: 0, end: 1_000, title: "Intro", url: "https://example.com/intro"),
        ChapterFixtures.Entry(id: "ch1", start: 1_000, end: 2_500, title: "Zwëite"),
        ChapterFixtures.Entry(id: "ch2", start: 2_500, end: 3_000, title: "Outro"),
    ]

    /// A three-second tone, lame's frames only.
    static func tone(seconds: Double = 3) throws -> URL {
        try TestMedia.makeTone(seconds: seconds, in: try TestMedia.scratchDirectory(), name: "chapters")
    }

    @Test(arguments: [3, 4])
    func readsMutagensChapters(version: Int) throws {
        let url = try Self.tone()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try ChapterFixtures.write(Self.entries, to: url, version: version)

        var read = ID3Chapters.read(url)
        #expect(read.problems == [])
        #expect(read.chapters.count == 3)
        // In the order of the file (mutagen's own); the item sorts them.
        read.chapters = Chapter.normalized(read.chapters, duration: nil)
        #expect(read.chapters.map(\.title) == ["Intro", "Zwëite", "Outro"])
        #expect(read.chapters.map(\.start) == [0, 1, 2.5] && read.chapters.map(\.end) == [1, 2.5, 3])
        #expect(read.chapters.map(\.url) == [URL(string: "https://example.com/intro"), nil, nil])
    }

    @Test func anItemHasItsFilesChaptersOnceOpenedClippedToItsDuration() throws {
        let url = try Self.tone(seconds: 2)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        // The last chapter claims to end past the file's two seconds; the middle one overlaps the last.
        try ChapterFixtures.write([ChapterFixtures.Entry(id: "b", start: 1_500, end: 9_000, title: "Late"),
                                   ChapterFixtures.Entry(id: "a", start: 0, end: 1_800, title: "Early")], to: url)
        let item = PlayerItem(url: url)
        #expect(item.chapters.isEmpty, "nothing is read before the item is opened")
        _ = try item.openDecoder(with: MPG123DecoderFactory())
        let chapters = item.chapters
        #expect(chapters.map(\.title) == ["Early", "Late"], "sorted by start")
        #expect(chapters.first?.end == 1.5, "an overlap ends where the next chapter starts")
        let duration = try item.duration?.seconds ?? Self.duration(url)
        #expect(abs((chapters.last?.end ?? 0) - duration) < 0.001, "clipped to the duration")
        #expect(item.chapterIndex(at: MediaTime(seconds: 1.6)) == 1 && item.chapterIndex(at: .zero) == 0)
    }

    @Test func aClippedItemsChaptersAreInItsOwnTime() throws {
        let url = try Self.tone()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try ChapterFixtures.write(Self.entries, to: url)
        let item = PlayerItem(url: url, clip: PlayerItem.Clip(start: MediaTime(seconds: 0.5), end: MediaTime(seconds: 2)))
        _ = try item.openDecoder(with: MPG123DecoderFactory())
        #expect(item.chapters.map(\.title) == ["Intro", "Zwëite"])
        #expect(item.chapters.map(\.start) == [0, 0.5])
        #expect(item.chapters.map(\.end) == [0.5, 1.5])
    }

    @Test func givenChaptersReplaceTheFiles() throws {
        let url = try Self.tone()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try ChapterFixtures.write(Self.entries, to: url)
        let item = PlayerItem(url: url)
        item.setChapters([Chapter(title: "Given", start: 1, end: .infinity)])
        _ = try item.openDecoder(with: MPG123DecoderFactory())
        #expect(item.chapters.map(\.title) == ["Given"])
        #expect(abs(item.chapters[0].end - (try Self.duration(url))) < 0.001, "an open end ends at the duration")
    }

    /// 100,000 `CHAP` frames, out of order and overlapping, many past the end: the walk stops
    /// at ID3v2Tag's frame cap, at most 1,000 are parsed, and the file plays.
    @Test func aHundredThousandHostileChapFramesCostBoundedTime() throws {
        let url = try Self.tone(seconds: 1)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let audio = Array(try Data(contentsOf: url))
        var frames: [[UInt8]] = []
        frames.reserveCapacity(100_000)
        for index in 0..<100_000 {
            // Descending starts (from 1.99 s down to 0, again and again), each overlapping the ones
            // after it, half of them past the one-second end.
            let start = ((100_000 - index) % 200) * 10
            let data = Array("c\(index)".utf8) + [0] + TagBuilder.plain(start) + TagBuilder.plain(start + 5_000)
                + TagBuilder.plain(0xFFFF_FFFF) + TagBuilder.plain(0xFFFF_FFFF)
                + TagBuilder.frame("TIT2", TagBuilder.text("Chapter \(index)"), major: 4)
            frames.append(TagBuilder.frame("CHAP", data, major: 4))
        }
        try Data(TagBuilder.tag(major: 4, frames: frames) + audio).write(to: url)

        let started = ContinuousClock.now
        let read = ID3Chapters.read(url)
        let elapsed = ContinuousClock.now - started
        #expect(read.chapters.count == Chapter.maximumCount)
        #expect(read.problems.contains { $0.contains("beyond the first 1000") })
        #expect(elapsed < .seconds(5), "took \(elapsed)")
        let item = PlayerItem(url: url)
        let decoder = try item.openDecoder(with: MPG123DecoderFactory())
        #expect(decoder.knownFrameCount ?? 0 > 0, "the audio is still there")
        let chapters = item.chapters
        #expect(chapters.count <= Chapter.maximumCount && !chapters.isEmpty)
        #expect(zip(chapters, chapters.dropFirst()).allSatisfy { $0.end <= $1.start && $0.start < $1.start })
        #expect(chapters.allSatisfy { $0.end <= 1.001 && $0.end > $0.start })
    }

    @Test func malformedFramesAreSkippedAndNamed() throws {
        let url = try Self.tone(seconds: 1)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let audio = Array(try Data(contentsOf: url))
        let good = Array("ok".utf8) + [0] + TagBuilder.plain(100) + TagBuilder.plain(500) + TagBuilder.plain(0) + TagBuilder.plain(0)
            + TagBuilder.frame("TIT2", TagBuilder.text("Good"), major: 3)
            // A subframe that claims more than the frame holds: ignored, the chapter kept.
            + Array("TIT2".utf8) + TagBuilder.plain(1 << 30) + [0, 0, 3]
        let frames = [TagBuilder.frame("CHAP", Array("short".utf8) + [0, 1, 2], major: 3),
                      TagBuilder.frame("CHAP", good, major: 3),
                      TagBuilder.frame("CTOC", [0x41], major: 3)]
        try Data(TagBuilder.tag(major: 3, frames: frames) + audio).write(to: url)
        let read = ID3Chapters.read(url)
        #expect(read.chapters.map(\.title) == ["Good"])
        #expect(read.problems.count == 2 && read.problems[0].contains("CHAP frame at byte 10 is malformed"))
        #expect(try MPG123Decoder(url: url).knownFrameCount ?? 0 > 0)
    }

    // MARK: - Podcast chapters JSON

    @Test func readsPodcastChaptersSkippingWrongTypes() throws {
        let json = """
            {"version": "1.2.0", "chapters": [
              {"startTime": 0, "title": "Welcome", "url": "https://example.com/a", "img": "https://example.com/a.jpg"},
              {"startTime": "12", "title": "a string start: skipped"},
              {"startTime": 30.5, "title": 7, "endTime": 40, "url": ["no"]},
              {"startTime": 35, "title": "hidden", "toc": false},
              42,
              {"startTime": true, "title": "a Boolean start: skipped"}
            ]}
            """
        let result = try PodcastChapters.parse(Data(json.utf8))
        #expect(result.skipped == 4)
        #expect(result.chapters.map(\.title) == ["Welcome", ""])
        #expect(result.chapters.map(\.start) == [0, 30.5])
        #expect(result.chapters[0].url == URL(string: "https://example.com/a"))
        #expect(result.chapters[0].picture == .remote(URL(string: "https://example.com/a.jpg")!))
        #expect(result.chapters[1].end == 40 && result.chapters[1].url == nil)
        let normalized = Chapter.normalized(result.chapters, duration: 60)
        #expect(normalized.map(\.end) == [30.5, 40])
    }

    @Test func hostileChapterJSONIsRefusedQuickly() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: PodcastChapters.Failure.tooDeep) { try PodcastChapters.parse(Data(deep.utf8)) }
        let huge = Data(count: PodcastChapters.maximumSize + 1)
        #expect(throws: PodcastChapters.Failure.tooLarge(huge.count)) { try PodcastChapters.parse(huge) }
        #expect(throws: PodcastChapters.Failure.notJSON) { try PodcastChapters.parse(Data("{\"chapters\": [".utf8)) }
        #expect(throws: PodcastChapters.Failure.noChapters) { try PodcastChapters.parse(Data("{\"chapters\": {}}".utf8)) }
        // Brackets in strings do not count as depth.
        let quoted = "{\"chapters\": [{\"startTime\": 1, \"title\": \"" + String(repeating: "[", count: 100) + "\"}]}"
        #expect(try PodcastChapters.parse(Data(quoted.utf8)).chapters.count == 1)

        // Just under 1 MiB of entries: at most 1,000 are looked at, the rest counted.
        var many = "{\"chapters\": ["
        for index in 0..<40_000 { many += "{\"startTime\": \(index)},"}
        many += "{\"startTime\": 0}]}"
        let data = Data(many.utf8)
        #expect(data.count < PodcastChapters.maximumSize)
        let started = ContinuousClock.now
        let result = try PodcastChapters.parse(data)
        #expect(result.chapters.count == Chapter.maximumCount && result.skipped == 40_001 - Chapter.maximumCount)
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func indexFindsTheChapterHoldingATime() {
        let chapters = Chapter.normalized([Chapter(title: "a", start: 0, end: 1), Chapter(title: "b", start: 2, end: 3)], duration: nil)
        #expect(Chapter.index(at: 0.5, in: chapters) == 0)
        #expect(Chapter.index(at: 1.5, in: chapters) == nil, "a gap")
        #expect(Chapter.index(at: 2, in: chapters) == 1)
        #expect(Chapter.index(at: 3, in: chapters) == nil)
        #expect(Chapter.index(at: -1, in: []) == nil)
    }

    static func duration(_ url: URL) throws -> Double {
        let decoder = try MPG123Decoder(url: url)
        return Double(decoder.knownFrameCount ?? 0) / Double(decoder.format.sampleRate)
    }
}
