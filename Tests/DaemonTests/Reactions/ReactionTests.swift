import Foundation
import Location
import Logging
import MPDProtocol
import QueuePlayer
import Synchronization
import Testing
import TestSupport
@testable import DaemonCore
@testable import Stickers

/// The daemon's reactions (Sources/DaemonCore/Instance/Reactions.swift), each on real parts in
/// the test process: what a download, a deletion, a change in the downloads' number, an update,
/// a region entered or an item that fails does to the library, the queue, the stickers and `status`.
@Suite("reactions")
struct ReactionTests {
    /// A music directory of its own holding `files` (copies of the test media), and the parts
    /// the daemon makes around it.
    final class Fixture {
        let music: URL
        let state: URL
        let parts: DaemonParts
        let wake = WakeRecorder()
        var partition: Partition { parts.partition }

        init(files: [String] = [], stickers: StickerAvailability? = nil) throws {
            music = try TestMedia.scratchDirectory()
            state = try TestMedia.scratchDirectory()
            for name in files {
                let file = music.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: TestMedia.directory.appendingPathComponent("01-morning-sine.mp3"), to: file)
            }
            parts = DaemonParts(player: QueuePlayer(sink: NullAudioSink()), library: MusicLibrary(root: music),
                                stateDirectory: state, stickers: stickers ?? .off)
        }

        deinit {
            try? FileManager.default.removeItem(at: music)
            try? FileManager.default.removeItem(at: state)
        }

        func downloads(autoEnqueue: Bool) -> DownloadsIntoLibrary {
            DownloadsIntoLibrary(partition: partition, updater: parts.instance.updater, wake: wake, autoEnqueue: autoEnqueue,
                                 musicDirectory: music, logger: Logger(label: "test"))
        }

        /// The queue's files, read on the partition's queue.
        func queuedFiles() async -> [URL] {
            await partition.run { $0.queuedFiles.map(\.standardizedFileURL) }
        }

        /// Whether the library's database has `uri`, read on the partition's queue.
        func libraryHas(_ uri: String) async -> Bool {
            let updater = parts.instance.updater
            return await partition.run { _ in updater.database.records[uri] != nil }
        }

        /// Waits (up to 10 s) until the library has, or has not, `uri`.
        func waitForLibrary(_ uri: String, toHave: Bool = true) async -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if await libraryHas(uri) == toHave { return true }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return false
        }

        func close() async {
            await partition.run { $0.player.close() }
        }
    }

    /// The wakes a reaction asks for, by name, and how many have ended.
    final class WakeRecorder: BackgroundWaking {
        private let state = Mutex<(names: [String], ended: Int)>(([], 0))

        var names: [String] { state.withLock { $0.names } }
        var ended: Int { state.withLock { $0.ended } }

        func beginBackgroundWake(named name: String, allowance: Double, onExpiry: @escaping @Sendable () -> Void) -> BackgroundActivity {
            state.withLock { $0.names.append(name) }
            return BackgroundActivity { [self] in state.withLock { $0.ended += 1 } }
        }
    }

    @Test func aDownloadedEpisodeJoinsTheLibraryAndWithAutoEnqueueTheQueue() async throws {
        let fixture = try Fixture(files: ["podcast/episode.mp3"])
        let file = fixture.music.appendingPathComponent("podcast/episode.mp3").standardizedFileURL
        fixture.downloads(autoEnqueue: true).downloaded("podcast/episode.mp3", file: file)
        #expect(await fixture.waitForLibrary("podcast/episode.mp3"))
        #expect(await fixture.queuedFiles() == [file])
        #expect(fixture.wake.names == ["transfer finished"])
        #expect(fixture.wake.ended == 1)
        await fixture.close()
    }

    /// A download's completion measures the episode (background work, in a wake of its own that
    /// ends when the measurement does), the figures ffmpeg's meter gives, kept in the store
    /// (written beside the state) and read back by a new store.
    @Test func aDownloadedEpisodeIsMeasuredInAWakeOfItsOwn() async throws {
        let fixture = try Fixture(files: ["podcast/episode.mp3"])
        let file = fixture.music.appendingPathComponent("podcast/episode.mp3").standardizedFileURL
        let storeFile = fixture.state.appendingPathComponent("loudness.json")
        let store = LoudnessStore(file: storeFile)
        let scans = LoudnessScans(store: store, player: fixture.partition.player, events: fixture.parts.events,
                                  logger: Logger(label: "test"))
        var downloads = fixture.downloads(autoEnqueue: false)
        downloads.loudness = scans
        downloads.downloaded("podcast/episode.mp3", file: file)
        #expect(await fixture.waitForLibrary("podcast/episode.mp3"))
        await fixture.partition.run { _ in }
        scans.waitUntilIdle()
        #expect(fixture.wake.names == ["transfer finished", "loudness scan"])
        #expect(fixture.wake.ended == 2, "the measurement's wake ended with it")
        let measured = try #require(store.measurement(of: file))
        let meter = try FFmpegLoudness.measure(file)
        #expect(abs(measured.integrated - meter.integrated) <= 0.2 && abs(measured.truePeak - meter.truePeak) <= 0.3,
                "\(measured) vs ffmpeg \(meter)")
        #expect(LoudnessStore(file: storeFile).measurement(of: file) == measured, "kept across a restart")
        // A file changed since is not taken for measured.
        try TestMedia.setModificationTime(file.path, seconds: 1_000_000, nanoseconds: 0)
        #expect(store.measurement(of: file) == nil)
        await fixture.close()
    }

    @Test func withoutAutoEnqueueTheQueueIsLeftAlone() async throws {
        let fixture = try Fixture(files: ["podcast/episode.mp3"])
        let file = fixture.music.appendingPathComponent("podcast/episode.mp3")
        fixture.downloads(autoEnqueue: false).downloaded("podcast/episode.mp3", file: file)
        #expect(await fixture.waitForLibrary("podcast/episode.mp3"))
        #expect(await fixture.queuedFiles() == [])
        await fixture.close()
    }

    @Test func aDeletedEpisodeLeavesTheQueueAndTheLibrary() async throws {
        let fixture = try Fixture(files: ["podcast/kept.mp3", "podcast/gone.mp3"])
        let (kept, gone) = (fixture.music.appendingPathComponent("podcast/kept.mp3").standardizedFileURL,
                            fixture.music.appendingPathComponent("podcast/gone.mp3").standardizedFileURL)
        let downloads = fixture.downloads(autoEnqueue: true)
        downloads.downloaded("podcast/kept.mp3", file: kept)
        downloads.downloaded("podcast/gone.mp3", file: gone)
        #expect(await fixture.waitForLibrary("podcast/gone.mp3"))
        #expect(await fixture.queuedFiles() == [kept, gone])
        try FileManager.default.removeItem(at: gone)
        downloads.deleted("podcast/gone.mp3")
        #expect(await fixture.queuedFiles() == [kept])
        #expect(await fixture.waitForLibrary("podcast/gone.mp3", toHave: false))
        #expect(await fixture.libraryHas("podcast/kept.mp3"))
        await fixture.close()
    }

    @Test func aChangeInTheDownloadsNumberIsCountedAndAKeptStatusGoes() async throws {
        let fixture = try Fixture()
        let count = TransferCount()
        let shown = TransfersShown(count: count, events: fixture.parts.events, statusLine: nil, partition: fixture.partition)
        let epoch = fixture.parts.events.statusSnapshot.epoch
        shown.changed(running: 3)
        #expect(count.value == 3)
        #expect(fixture.parts.events.statusSnapshot.epoch != epoch)
        shown.changed(running: 0)
        #expect(count.value == 0)
        await fixture.close()
    }

    @Test func theStickersFollowARenamedSongAndForgetARemovedOne() async throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try StickerStore(file: directory.appendingPathComponent("sticker.sql"))
        #expect(try store.set(uri: "a.mp3", name: "rating", value: "5"))
        #expect(try store.set(uri: "c.mp3", name: "rating", value: "1"))
        let fixture = try Fixture(stickers: .open(store))
        let follower = StickersFollowLibrary(stickers: fixture.parts.instance.stickers, events: fixture.parts.events,
                                             logger: Logger(label: "test"))
        func record(_ uri: String, size: Int64) -> SongDatabase.Record {
            SongDatabase.Record(uri: uri, modified: 1, modifiedNanoseconds: 1, size: size, duration: 2, format: nil,
                                tags: [.init(.title, "T")])
        }
        var before = SongDatabase(root: "/music")
        before.records = ["a.mp3": record("a.mp3", size: 1000), "c.mp3": record("c.mp3", size: 3000)]
        var after = SongDatabase(root: "/music")
        after.records = ["dir/a.mp3": record("dir/a.mp3", size: 1000)]
        let (previous, next) = (before, after)
        await fixture.partition.run { _ in follower.libraryChanged(from: previous, to: next) }
        #expect(waitUntil(timeout: 10) { (try? store.value(uri: "dir/a.mp3", name: "rating")) == "5" })
        #expect(try store.value(uri: "a.mp3", name: "rating") == nil)
        #expect(waitUntil(timeout: 10) { (try? store.stickers(uri: "c.mp3"))?.isEmpty == true })
        await fixture.close()
    }

    /// The default file not made yet: an update does not make it (only a sticker command does).
    @Test func aDatabaseNotYetMadeIsNotMadeByAnUpdate() async throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("state/sticker.sql")
        let fixture = try Fixture(stickers: .deferred(file))
        let follower = StickersFollowLibrary(stickers: fixture.parts.instance.stickers, events: fixture.parts.events,
                                             logger: Logger(label: "test"))
        var before = SongDatabase(root: "/music")
        before.records = ["a.mp3": SongDatabase.Record(uri: "a.mp3", modified: 1, size: 1, duration: 1, format: nil, tags: [])]
        let (previous, next) = (before, SongDatabase(root: "/music"))
        await fixture.partition.run { _ in follower.libraryChanged(from: previous, to: next) }
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(fixture.parts.instance.stickers.unavailableCommands.isEmpty, "still listed: the first sticker command makes it")
        await fixture.close()
    }

    @Test func aRegionEnteredWithAudioPlaysItsAnnouncementAndOneWithoutPlaysNothing() async throws {
        let fixture = try Fixture()
        let announcement = TestMedia.directory.appendingPathComponent("01-morning-sine.mp3")
        let announcements = RegionAnnouncements(partition: fixture.partition)
        let region = CircularRegion(center: Coordinate(latitude: 48.85, longitude: 2.35), radius: 50, identifier: "bridge")
        await fixture.partition.run { _ in announcements.entered("bridge", waypoint: RegionWaypoint(region: region, audio: nil)) }
        #expect(fixture.partition.player.items().isEmpty)
        await fixture.partition.run { _ in announcements.entered("unknown", waypoint: nil) }
        #expect(fixture.partition.player.items().isEmpty)
        await fixture.partition.run { _ in
            announcements.entered("bridge", waypoint: RegionWaypoint(region: region, audio: announcement))
        }
        #expect(fixture.partition.player.items().map(\.url) == [announcement])
        // The queue itself is not changed.
        #expect(await fixture.queuedFiles() == [])
        await fixture.close()
    }

    @Test func anItemThatFailsIsStatusesErrorAStreamNamedByItsURL() async throws {
        let fixture = try Fixture()
        let failures = PlaybackFailures(partition: fixture.partition, logger: Logger(label: "test"))
        failures.failed(.init(url: URL(string: "http://radio.example/live")!), error: "connection refused")
        #expect(await fixture.partition.run { $0.lastError } == "http://radio.example/live: connection refused")
        failures.failed(.init(url: URL(string: "http://radio.example/live")!), error: "http://radio.example/live: gone")
        #expect(await fixture.partition.run { $0.lastError } == "http://radio.example/live: gone")
        failures.failed(.init(url: URL(fileURLWithPath: "/music/x.mp3")), error: "cannot decode")
        #expect(await fixture.partition.run { $0.lastError } == "cannot decode")
        failures.failed(nil, error: "unknown error")
        #expect(await fixture.partition.run { $0.lastError } == "unknown error")
        await fixture.close()
    }
}
