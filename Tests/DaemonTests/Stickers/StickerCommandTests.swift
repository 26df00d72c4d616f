import Foundation
import Logging
import MPDProtocol
import NIOCore
import NIOEmbedded
import QueuePlayer
import Testing
@testable import DaemonCore
@testable import MPDServer
@testable import Stickers

/// `sticker` on a control connection, in process: mpd 0.23.12's transcript replayed
/// word for word, the database disabled, idle's `sticker`, and the stickers following a song
/// renamed by `update`.
@Suite("sticker commands")
struct StickerCommandTests {
    /// The transcript's four songs.
    static let songs = ["01-morning-sine.mp3", "02-evening-triangle.mp3", "dir/03-noon-pluck-22k-mono.mp3",
                        "dirx/04-night-pluck.mp3"]

    /// A partition whose library has ``songs`` (its saved database: no files needed) and, unless
    /// `stickers` is false, a sticker database beside it.
    final class Fixture {
        let parts: DaemonParts
        let scheduler: ManualConnectionScheduler
        let directory: URL
        let store: StickerStore?
        var partition: Partition { parts.partition }
        var events: ControlEvents { parts.events }

        /// `deferred`: with no store, the default file at this path under the directory, made by
        /// the first sticker command.
        init(stickers: Bool = true, songs: [String] = StickerCommandTests.songs, deferred: String? = nil) throws {
            directory = try FileManager.default.url(for: .itemReplacementDirectory, in: .userDomainMask,
                                                    appropriateFor: URL(fileURLWithPath: NSTemporaryDirectory()), create: true)
            let library = MusicLibrary(root: directory)
            var database = SongDatabase(root: library.root.path)
            database.updated = 1
            for uri in songs {
                database.records[uri] = SongDatabase.Record(uri: uri, modified: 1, size: 1, duration: 1, format: nil, tags: [])
            }
            try JSONEncoder().encode(database).write(to: directory.appendingPathComponent("database.json"))
            store = stickers ? try StickerStore(file: directory.appendingPathComponent("sticker.sql")) : nil
            let availability = store.map(StickerAvailability.open)
                ?? deferred.map { [directory] in .deferred(directory.appendingPathComponent($0)) } ?? .off
            parts = DaemonParts(player: QueuePlayer(sink: NullAudioSink()), library: library, stateDirectory: directory,
                                stickers: availability)
            scheduler = ManualConnectionScheduler(partition: parts.partition)
        }

        deinit {
            try? FileManager.default.removeItem(at: directory)
        }

        func connect(permissions: Permission = .all) throws -> ControlConnectionTests.Client {
            let channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandler(
                ControlConnection(environment: parts.environment(scheduler: scheduler),
                                  logger: Logger(label: "test"), permissions: permissions))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 6600)).wait()
            let client = ControlConnectionTests.Client(channel: channel, scheduler: scheduler)
            #expect(try client.received() == ClientSession.greeting)
            return client
        }
    }

    /// Every request of `Tests/IntegrationTests/Transcripts/51-raw-stickers.txt` (mpd 0.23.12, the
    /// same songs) gets mpd's reply here, line for line.
    @Test func theRepliesAreMPDsForTheTranscriptsRequests() throws {
        let fixture = try Fixture()
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("IntegrationTests/Transcripts/51-raw-stickers.txt")
        var exchanges: [(request: String, expected: [String])] = []
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
            if let range = line.range(of: "] -> b'") {
                exchanges.append((line[range.upperBound...].dropLast().replacingOccurrences(of: "\\n", with: "\n"), []))
            } else if let range = line.range(of: "] <- "), !exchanges.isEmpty {
                exchanges[exchanges.count - 1].expected.append(String(line[range.upperBound...]))
            }
        }
        #expect(exchanges.count == 37)
        let client = try fixture.connect()
        for (request, expected) in exchanges {
            try client.send(request)
            #expect(try client.settle().split(separator: "\n").map(String.init) == expected, "\(request)")
        }
    }

    @Test func withoutADatabaseEachStickerCommandIsRefusedAsMPDRefusesIt() throws {
        let fixture = try Fixture(stickers: false)
        let client = try fixture.connect()
        // Before the arguments are looked at, as mpd does.
        for request in ["sticker list song 01-morning-sine.mp3\n", "sticker frob album x\n"] {
            try client.send(request)
            #expect(try client.settle() == "ACK [5@0] {sticker} sticker database is disabled\n")
        }
        // The table's count still comes first.
        try client.send("sticker list song\n")
        #expect(try client.settle() == "ACK [2@0] {sticker} too few arguments for \"sticker\"\n")
    }

    @Test func aDatabaseDamagedWhileRunningIsAnACKAndTheDaemonGoesOn() throws {
        let fixture = try Fixture()
        let client = try fixture.connect()
        try client.send("sticker set song 01-morning-sine.mp3 rating 5\n")
        #expect(try client.settle() == "OK\n")
        let handle = try FileHandle(forWritingTo: fixture.directory.appendingPathComponent("sticker.sql"))
        try handle.write(contentsOf: Data(repeating: 0x42, count: 4096))
        try handle.close()
        try client.send("sticker get song 01-morning-sine.mp3 rating\n")
        let reply = try client.settle()
        #expect(reply.hasPrefix("ACK [5@0] {sticker} sticker database: ") && reply.contains("not a database"), "\(reply)")
        try client.send("ping\nstatus\n")
        #expect(try client.settle().hasSuffix("OK\n"))
    }

    @Test func theDefaultFileIsMadeByTheFirstStickerCommand() throws {
        let fixture = try Fixture(stickers: false, deferred: "state/queueplayerd/sticker.sql")
        let file = fixture.directory.appendingPathComponent("state/queueplayerd/sticker.sql")
        let client = try fixture.connect()
        try client.send("commands\n")
        #expect(try client.settle().contains("command: sticker\n"), "listed before the file is made")
        #expect(!FileManager.default.fileExists(atPath: file.path))
        try client.send("sticker list song 01-morning-sine.mp3\nsticker set song 01-morning-sine.mp3 rating 2\n")
        #expect(try client.settle() == "OK\nOK\n")
        #expect(FileManager.default.fileExists(atPath: file.path))
        #expect(try StickerStore(file: file).value(uri: "01-morning-sine.mp3", name: "rating") == "2")
    }

    @Test func stickerNeedsAdminAsInMPDsTable() throws {
        let fixture = try Fixture()
        let reader = try fixture.connect(permissions: [.read, .add, .player, .control])
        try reader.send("sticker get song 01-morning-sine.mp3 rating\n")
        #expect(try reader.settle() == "ACK [4@0] {sticker} you don't have permission for \"sticker\"\n")
        let admin = try fixture.connect(permissions: [.admin])
        try admin.send("sticker set song 01-morning-sine.mp3 rating 5\nsticker get song 01-morning-sine.mp3 rating\n")
        #expect(try admin.settle() == "OK\nsticker: rating=5\nOK\n")
    }

    @Test func aChangeWakesTheClientsIdlingOnSticker() throws {
        let fixture = try Fixture()
        let idler = try fixture.connect(), writer = try fixture.connect()
        try idler.send("idle sticker\n")
        #expect(try idler.settle() == "")
        try writer.send("sticker get song 01-morning-sine.mp3 rating\n")
        #expect(try writer.settle() == "ACK [50@0] {sticker} no such sticker\n")
        #expect(try idler.settle() == "", "reading changes nothing")
        try writer.send("sticker set song 01-morning-sine.mp3 rating 5\n")
        #expect(try writer.settle() == "OK\n")
        #expect(try idler.settle() == "changed: sticker\nOK\n")
    }

    @Test func findDropsSongsTheLibraryLacksThenTakesTheWindowInTheOrderAsked() throws {
        let fixture = try Fixture()
        let store = try #require(fixture.store)
        for (uri, value) in zip(Self.songs, ["4", "12", "3", "7"]) { try store.set(uri: uri, name: "rating", value: value) }
        // A sticker left from a song that is gone (mpd skips it in silence).
        try store.set(uri: "gone.mp3", name: "rating", value: "1")
        let client = try fixture.connect()
        try client.send("sticker find song \"\" rating sort -value_int window 1:3\n")
        // 12, 7, 4, 3 (the 1 of the song gone is dropped first): the second and the third.
        #expect(try client.settle() == "file: dirx/04-night-pluck.mp3\nsticker: rating=7\nfile: 01-morning-sine.mp3\nsticker: rating=4\nOK\n")
        // As text: "12" < "3" < "4" < "7".
        try client.send("sticker find song \"\" rating sort value window 3:\n")
        #expect(try client.settle() == "file: dirx/04-night-pluck.mp3\nsticker: rating=7\nOK\n")
        try client.send("sticker find song \"\" rating > 3 sort uri window 10:20\n")
        #expect(try client.settle() == "OK\n")
        try client.send("sticker find song \"\" rating sort title\n")
        #expect(try client.settle() == "ACK [2@0] {sticker} Unknown sort tag \"title\"\n")
    }
}
