import Foundation
import QueuePlayer
import Stickers
import Testing
import TestSupport
@testable import DaemonCore

/// What the partition remembers of the items heard (``PlaybackMemory``), on the null sink paced
/// by the virtual clock, with a real sticker database: an 11-minute item (silence at 8 kb/s,
/// made once per run) seeked near the points tested stands for a long item; a 20 s tone for a
/// short music item; a 60 s one under `Podcasts/` for an episode.
@Suite struct PlaybackMemoryTests {
    /// The 660 s item, made once (sox, lame), copied into each fixture's library.
    private static let longItem: Result<URL, any Error> = Result {
        let directory = try TestMedia.scratchDirectory()
        return try TestMedia.makeSilence(seconds: 660, in: directory, name: "long")
    }

    private static func fixture(_ options: PlaybackMemory.Options = .init()) throws -> (PartitionFixture, URL) {
        let fixture = try PartitionFixture(memory: options)
        let long = fixture.directory.appendingPathComponent("long.mp3")
        try FileManager.default.copyItem(at: try longItem.get(), to: long)
        return (fixture, long)
    }

    /// Plays on for `seconds` of the virtual clock, a step at a time, letting the partition
    /// take in each periodic time.
    private static func play(_ fixture: PartitionFixture, seconds: Int) async {
        for _ in 0..<(seconds * 4) {
            fixture.clock.advance(bySeconds: 0.25)
            _ = await fixture.partition.run { _ in true }
        }
    }

    private static func elapsed(_ fixture: PartitionFixture) async -> Double {
        await fixture.value(of: "elapsed", in: "status").flatMap(Double.init) ?? -1
    }

    /// `inprogress`'s `elapsed` of `file`; nil when it keeps no place.
    private static func kept(_ fixture: PartitionFixture, _ file: String) async -> Double? {
        let lines = await fixture.send("inprogress").split(separator: "\n").map(String.init)
        guard let index = lines.firstIndex(of: "file: \(file)"), index + 1 < lines.count,
              lines[index + 1].hasPrefix("elapsed: ") else { return nil }
        return Double(lines[index + 1].dropFirst(9))
    }

    private static func sticker(_ fixture: PartitionFixture, _ uri: String, _ name: String) async -> String? {
        // Behind the writes queued before it (the memory's writer), as a client's would be.
        _ = await fixture.send("inprogress")
        return try? fixture.stickers?.value(uri: uri, name: name)
    }

    @Test func aLongItemKeepsItsPlaceOnStopAndResumesLessTheRewind() async throws {
        let (fixture, long) = try Self.fixture(.init(rewind: 2))
        await fixture.partition.run { $0.append([long]) }
        #expect(await fixture.send("play") == "OK\n")
        #expect(fixture.waitFor(.playing))
        #expect(await fixture.send("seekcur 100") == "OK\n")
        await Self.play(fixture, seconds: 6)
        let left = await Self.elapsed(fixture)
        #expect(await fixture.send("stop") == "OK\n")
        let kept = try #require(await Self.kept(fixture, "long.mp3"))
        #expect(abs(kept - left) < 0.5, "kept \(kept) s, left at \(left) s")
        #expect(await fixture.send("play") == "OK\n")
        let resumed = await Self.elapsed(fixture)
        #expect(abs(resumed - (kept - 2)) < 0.5, "resumed at \(resumed) s: kept \(kept) s less the 2 s rewind")
        await fixture.close()
    }

    @Test func nextAndExitKeepThePlaceAndHeardIntoTheLastThirtySecondsRemovesIt() async throws {
        let (fixture, long) = try Self.fixture()
        let short = try TestMedia.makeTone(seconds: 3, in: fixture.directory, name: "short")
        await fixture.partition.run { $0.append([long, short]) }
        #expect(await fixture.send("play 0") == "OK\n")
        #expect(fixture.waitFor(.playing))
        #expect(await fixture.send("seekcur 200") == "OK\n")
        await Self.play(fixture, seconds: 3)
        #expect(await fixture.send("next") == "OK\n")
        let onNext = try #require(await Self.kept(fixture, "long.mp3"))
        #expect(onNext > 202 && onNext < 204, "kept at \(onNext) s on next")
        // Played again from its start, by id: where it was left.
        #expect(await fixture.send("playid 1") == "OK\n")
        #expect(abs(await Self.elapsed(fixture) - onNext) < 0.5)
        await Self.play(fixture, seconds: 2)
        await fixture.partition.run { $0.saveMemoryBeforeExit() }
        let onExit = try #require(await Self.kept(fixture, "long.mp3"))
        #expect(onExit > onNext + 1.5 && onExit < onNext + 3, "kept at \(onExit) s at the exit")
        // Into the last 30 s: finished, nothing kept.
        #expect(await fixture.send("seekcur 635") == "OK\n")
        await Self.play(fixture, seconds: 2)
        #expect(await fixture.send("stop") == "OK\n")
        #expect(await Self.kept(fixture, "long.mp3") == nil)
        // A seek without play keeps no resume: `seek` goes where it is told.
        #expect(await fixture.send("seek 0 50") == "OK\n")
        #expect(abs(await Self.elapsed(fixture) - 50) < 0.5)
        await fixture.close()
    }

    @Test func aPeriodicSaveLosesAtMostTheSaveIntervalAndTheEndRemovesIt() async throws {
        let (fixture, long) = try Self.fixture()
        await fixture.partition.run { $0.append([long]) }
        #expect(await fixture.send("play") == "OK\n")
        #expect(fixture.waitFor(.playing))
        #expect(await fixture.send("seekcur 300") == "OK\n")
        await Self.play(fixture, seconds: 12)
        // No event since the seek: what a crash would find is the last periodic save.
        let now = await Self.elapsed(fixture)
        let saved = try #require(await Self.kept(fixture, "long.mp3"))
        #expect(now - saved <= PlaybackMemory.saveInterval + 1.1 && saved > 300, "saved \(saved) s, heard \(now) s")
        // Played through its end: nothing kept.
        #expect(await fixture.send("seekcur 655") == "OK\n")
        await Self.play(fixture, seconds: 7)
        #expect(await fixture.value(of: "state", in: "status") == "stop")
        #expect(await Self.kept(fixture, "long.mp3") == nil)
        await fixture.close()
    }

    @Test func aShortMusicItemKeepsNothingAndAnEpisodeDoes() async throws {
        let fixture = try PartitionFixture(memory: .init())
        let podcasts = fixture.directory.appendingPathComponent("Podcasts/Show")
        try FileManager.default.createDirectory(at: podcasts, withIntermediateDirectories: true)
        let episode = try TestMedia.makeSilence(seconds: 60, in: podcasts, name: "episode")
        let song = try TestMedia.makeTone(seconds: 20, in: fixture.directory, name: "song")
        await fixture.partition.run { $0.append([song, episode]) }
        #expect(await fixture.send("play 0") == "OK\n")
        #expect(fixture.waitFor(.playing))
        await Self.play(fixture, seconds: 6)
        #expect(await fixture.send("play 1") == "OK\n")
        #expect(await Self.kept(fixture, "song.mp3") == nil)
        #expect(await fixture.send("seekcur 20") == "OK\n")
        await Self.play(fixture, seconds: 2)
        #expect(await fixture.send("stop") == "OK\n")
        let kept = try #require(await Self.kept(fixture, "Podcasts/Show/episode.mp3"))
        #expect(kept > 21 && kept < 23)
        await fixture.close()
    }

    @Test func statisticsFollowMyMPDsRules() async throws {
        let (fixture, long) = try Self.fixture()
        let song = try TestMedia.makeTone(seconds: 20, in: fixture.directory, name: "song")
        let brief = try TestMedia.makeTone(seconds: 8, in: fixture.directory, name: "brief")
        await fixture.partition.run { $0.append([song, long, brief]) }
        #expect(await fixture.send("play 0") == "OK\n")
        #expect(fixture.waitFor(.playing))
        // 20 s: played once heard for 10 s (half its length), not before.
        await Self.play(fixture, seconds: 9)
        #expect(await Self.sticker(fixture, "song.mp3", "playCount") == nil)
        await Self.play(fixture, seconds: 2)
        #expect(await Self.sticker(fixture, "song.mp3", "playCount") == "1")
        let lastPlayed = try #require(await Self.sticker(fixture, "song.mp3", "lastPlayed").flatMap(Int.init))
        #expect(abs(lastPlayed - Int(Date().timeIntervalSince1970)) < 60)
        // Left after 12 s of 11 minutes (under 4 minutes heard): skipped.
        #expect(await fixture.send("play 1") == "OK\n")
        #expect(await fixture.send("seekcur 0") == "OK\n")
        await Self.play(fixture, seconds: 12)
        #expect(await fixture.send("next") == "OK\n")
        #expect(await Self.sticker(fixture, "long.mp3", "skipCount") == "1")
        #expect(await Self.sticker(fixture, "long.mp3", "lastSkipped") != nil)
        #expect(await Self.sticker(fixture, "long.mp3", "playCount") == nil)
        // An 8 s item: no statistics at all, however it is heard.
        await Self.play(fixture, seconds: 9)
        #expect(await Self.sticker(fixture, "brief.mp3", "playCount") == nil)
        #expect(await Self.sticker(fixture, "brief.mp3", "skipCount") == nil)
        // Left after 5 s: not heard long enough to be skipped.
        #expect(await fixture.send("play 0") == "OK\n")
        await Self.play(fixture, seconds: 5)
        #expect(await fixture.send("next") == "OK\n")
        #expect(await Self.sticker(fixture, "song.mp3", "skipCount") == nil)
        await fixture.close()
    }

    @Test func theClientSettingLeavesTheStatisticsAlone() async throws {
        let (fixture, long) = try Self.fixture(.init(keepsStatistics: false))
        let song = try TestMedia.makeTone(seconds: 20, in: fixture.directory, name: "song")
        await fixture.partition.run { $0.append([song, long]) }
        #expect(await fixture.send("play 0") == "OK\n")
        #expect(fixture.waitFor(.playing))
        await Self.play(fixture, seconds: 12)
        #expect(await fixture.send("play 1") == "OK\n")
        await Self.play(fixture, seconds: 12)
        #expect(await fixture.send("stop") == "OK\n")
        for name in ["playCount", "lastPlayed", "skipCount", "lastSkipped"] {
            #expect(await Self.sticker(fixture, "song.mp3", name) == nil, "\(name)")
            #expect(await Self.sticker(fixture, "long.mp3", name) == nil, "\(name)")
        }
        // The place is kept whoever keeps the statistics.
        #expect(await Self.kept(fixture, "long.mp3") != nil)
        await fixture.close()
    }
}
