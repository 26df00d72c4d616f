import Foundation
import TestSupport
import Testing

/// Chapters on the daemon in process, at real-time pace (the null output), on a 6 s tone whose
/// `CHAP` frames mutagen wrote (0-2 s, 2-4 s, 4-6 s): `chapters`, `status`'s `chapter`,
/// `seekchapter`, `idle player` and the `Chapter:` line as a chapter starts; an episode's
/// chapters file beside the audio; bad arguments answered with an ACK that changes nothing.
@Suite("chapters", .serialized)
struct ChapterCommandTests {
    /// A music directory with `chapters.mp3` (three chapters) and `plain.mp3` (none).
    static func library() throws -> URL {
        let directory = try TestMedia.scratchDirectory()
        let chaptered = try TestMedia.makeTone(seconds: 6, in: directory, name: "chapters")
        try ChapterFixtures.write([
            ChapterFixtures.Entry(id: "a", start: 0, end: 2_000, title: "Intro", url: "https://example.com/intro"),
            ChapterFixtures.Entry(id: "b", start: 2_000, end: 4_000, title: "Middle"),
            ChapterFixtures.Entry(id: "c", start: 4_000, end: 6_000, title: "End"),
        ], to: chaptered)
        _ = try TestMedia.makeTone(seconds: 3, in: directory, name: "plain")
        return directory
    }

    @Test func listsChaptersFollowsThemAndSeeks() throws {
        let music = try Self.library()
        defer { try? FileManager.default.removeItem(at: music) }
        let daemon = try InProcessDaemon { $0.musicDirectory = music.path }
        defer { daemon.stop() }
        let client = try daemon.client()
        #expect(try client.request("chapters \"chapters.mp3\"") == [
            "chapter: 1", "start: 0.000", "end: 2.000", "title: Intro", "url: https://example.com/intro",
            "chapter: 2", "start: 2.000", "end: 4.000", "title: Middle",
            "chapter: 3", "start: 4.000", "end: 6.000", "title: End", "OK",
        ])
        #expect(try client.request("chapters") == ["OK"], "nothing plays: no chapters")
        #expect(try client.request("chapters \"plain.mp3\"") == ["OK"])
        #expect(try client.request("chapters \"missing.mp3\"") == ["ACK [50@0] {chapters} No such file"])
        #expect(try client.request("seekchapter 1") == ["ACK [55@0] {seekchapter} Not playing"])

        #expect(try client.request("add \"chapters.mp3\"") == ["OK"])
        #expect(try client.request("play 0") == ["OK"])
        let first = try daemon.waitForStatus(timeout: 5) { $0["chapter"] == "1" }
        #expect(first["chapter"] == "1", "\(first)")
        #expect(try client.request("chapters").first == "chapter: 1")
        #expect(daemon.waitForLine(timeout: 5) { $0 == "Chapter: Intro" } != nil, "\(daemon.lines.map(\.text))")

        // `idle player` returns as the second chapter starts, with nothing else going on.
        let idler = try daemon.client()
        try idler.send("idle player\n")
        #expect(try idler.readReply(timeout: 8) == ["changed: player", "OK"])
        let second = try daemon.status()
        #expect(second["chapter"] == "2" && (Double(second["elapsed"] ?? "") ?? 0) >= 1.9, "\(second)")
        #expect(daemon.waitForLine(timeout: 5) { $0 == "Chapter: Middle" } != nil)

        // Bad arguments change nothing.
        for (request, reply) in [
            ("seekchapter 99", "ACK [2@0] {seekchapter} No chapter 99: the current song has 3 chapters"),
            ("seekchapter abc", "ACK [2@0] {seekchapter} Expected a chapter number (1 or more), next or previous: abc"),
            ("seekchapter 0", "ACK [2@0] {seekchapter} Expected a chapter number (1 or more), next or previous: 0"),
            ("seekchapter", "ACK [2@0] {seekchapter} wrong number of arguments for \"seekchapter\""),
        ] {
            #expect(try client.request(request) == [reply])
        }
        #expect(try daemon.status()["chapter"] == "2")

        #expect(try client.request("seekchapter 3") == ["OK"])
        let third = try daemon.status()
        #expect(third["chapter"] == "3" && (Double(third["elapsed"] ?? "") ?? 0) >= 4, "\(third)")
        #expect(daemon.waitForLine(timeout: 5) { $0 == "Chapter: End" } != nil, "a seek into a chapter is announced too")
        #expect(try client.request("seekchapter next") == ["ACK [2@0] {seekchapter} No chapter after chapter 3, the last of 3 chapters"])
        // Within 3 s of its start: the chapter before, as a back button does.
        #expect(try client.request("seekchapter previous") == ["OK"])
        #expect(try daemon.status()["chapter"] == "2")
        #expect(try client.request("seekchapter next") == ["OK"])
        #expect(try daemon.status()["chapter"] == "3")
    }

    /// `sleep chapter` pauses where the chapter heard ends (the player's current chapter).
    @Test func sleepChapterPausesAtTheChaptersEnd() throws {
        let music = try Self.library()
        defer { try? FileManager.default.removeItem(at: music) }
        let daemon = try InProcessDaemon { $0.musicDirectory = music.path }
        defer { daemon.stop() }
        let client = try daemon.client()
        for request in ["add \"chapters.mp3\"", "play 0"] { #expect(try client.request(request) == ["OK"]) }
        try daemon.waitForElapsed(atLeast: 0.1)
        #expect(try client.request("sleep chapter") == ["OK"])
        let paused = try daemon.waitForStatus(timeout: 8) { $0["state"] == "pause" }
        let elapsed = Double(paused["elapsed"] ?? "") ?? -1
        #expect(paused["state"] == "pause" && abs(elapsed - 2) < 0.3, "paused at the first chapter's end (2 s): \(paused)")
    }

    @Test func aSongWithoutChaptersRefusesSeekchapter() throws {
        let music = try Self.library()
        defer { try? FileManager.default.removeItem(at: music) }
        let daemon = try InProcessDaemon { $0.musicDirectory = music.path }
        defer { daemon.stop() }
        let client = try daemon.client()
        for request in ["add \"plain.mp3\"", "play 0"] { #expect(try client.request(request) == ["OK"]) }
        try daemon.waitForElapsed(atLeast: 0.1)
        #expect(try client.request("seekchapter 1") == ["ACK [2@0] {seekchapter} the current song has no chapters"])
        #expect(try client.request("seekchapter next") == ["ACK [2@0] {seekchapter} the current song has no chapters"])
        #expect(try daemon.status()["chapter"] == nil)
        #expect(try client.request("chapters") == ["OK"])
    }

    /// A podcast episode's chapters file beside it wins over its ID3 frames; a broken one is
    /// ignored with a warning naming it, and the ID3 chapters are used.
    @Test func anEpisodesChaptersFileIsUsedAndABrokenOneIsNamed() throws {
        let music = try Self.library()
        defer { try? FileManager.default.removeItem(at: music) }
        try Data("""
            {"version": "1.2.0", "chapters": [{"startTime": 0, "title": "Cold open"},
              {"startTime": 1.5, "title": "Interview", "url": "https://example.com/i", "img": "https://example.com/i.jpg"},
              {"startTime": "x"}]}
            """.utf8).write(to: music.appendingPathComponent("chapters.chapters.json"))
        let daemon = try InProcessDaemon { $0.musicDirectory = music.path }
        defer { daemon.stop() }
        let client = try daemon.client()
        #expect(try client.request("chapters \"chapters.mp3\"") == [
            "chapter: 1", "start: 0.000", "end: 1.500", "title: Cold open",
            "chapter: 2", "start: 1.500", "end: 6.000", "title: Interview", "url: https://example.com/i", "OK",
        ])
        #expect(daemon.waitForStandardError { $0.contains("chapters.chapters.json: 1 entries without a usable startTime") })
        for request in ["add \"chapters.mp3\"", "play 0"] { #expect(try client.request(request) == ["OK"]) }
        #expect(try daemon.waitForStatus(timeout: 5) { $0["chapter"] == "1" }["chapter"] == "1")
        #expect(try client.request("chapters").filter { $0.hasPrefix("title: ") } == ["title: Cold open", "title: Interview"])

        try Data(String(repeating: "[", count: 5_000).utf8).write(to: music.appendingPathComponent("chapters.chapters.json"))
        #expect(try client.request("chapters \"chapters.mp3\"").filter { $0.hasPrefix("title: ") }
                == ["title: Intro", "title: Middle", "title: End"])
        #expect(daemon.waitForStandardError { $0.contains("chapters.chapters.json ignored: the chapters file is nested deeper than 16 levels") })
    }

    /// 100,000 `CHAP` frames (out of order, overlapping, past the end) cost the opening a
    /// bounded time, and the file plays.
    @Test func aFileWithAHundredThousandChapFramesPlays() throws {
        let music = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: music) }
        let tone = try TestMedia.makeTone(seconds: 2, in: music, name: "hostile")
        try TestMedia.run("/usr/bin/python3", ["-c", """
            import struct, sys
            audio = open(sys.argv[1], "rb").read()
            def size(n): return bytes([(n >> 21) & 0x7f, (n >> 14) & 0x7f, (n >> 7) & 0x7f, n & 0x7f])
            frames = []
            for i in range(100000):
                title = b"\\x03Chapter %d" % i
                sub = b"TIT2" + size(len(title)) + b"\\x00\\x00" + title
                start = ((100000 - i) % 300) * 10
                data = b"c%d\\x00" % i + struct.pack(">IIII", start, start + 9000, 0xFFFFFFFF, 0xFFFFFFFF) + sub
                frames.append(b"CHAP" + size(len(data)) + b"\\x00\\x00" + data)
            body = b"".join(frames)
            open(sys.argv[1], "wb").write(b"ID3\\x04\\x00\\x00" + size(len(body)) + body + audio)
            """, tone.path])
        let daemon = try InProcessDaemon { $0.musicDirectory = music.path }
        defer { daemon.stop() }
        let client = try daemon.client()
        let started = ContinuousClock.now
        let listed = try client.request("chapters \"hostile.mp3\"", timeout: 20)
        #expect(ContinuousClock.now - started < .seconds(10))
        let count = listed.filter { $0.hasPrefix("chapter: ") }.count
        #expect(count > 0 && count <= 1_000, "\(count) chapters")
        #expect(daemon.waitForStandardError { $0.contains("beyond the first 1000 are ignored") })
        for request in ["add \"hostile.mp3\"", "play 0"] { #expect(try client.request(request) == ["OK"]) }
        try daemon.waitForElapsed(atLeast: 0.3, timeout: 10)
        #expect(try daemon.status()["state"] == "play")
    }
}
