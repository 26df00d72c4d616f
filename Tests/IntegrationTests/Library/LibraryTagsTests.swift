import Foundation
import TestSupport
import Testing

/// The song database's tags beyond the first six (AlbumArtist, Composer, Disc, ...), read
/// with libmpg123 from files tagged by mutagen at test time; cover art (`albumart`,
/// `readpicture`) in chunks; `update DIR`, through the real clients (mpc, python-mpd2). (The
/// replies to bad input over a raw connection: DaemonInProcessTests' suite of the same name.)
@Suite(.serialized) struct LibraryTagsTests {
    typealias Steps = ControlSocketPythonTests.Steps

    static let scripts = TranscriptLibrary.scripts

    @Test func mpcShowsTheNewTagsAndFetchesBothPictures() throws {
        let library = try TaggedLibrary()
        let daemon = try library.daemon()
        defer { daemon.stop() }

        expectSuccess(try daemon.mpc("-f", "%file%;%albumartist%;%composer%;%disc%;%track%;%date%", "find", "album", "Tagged Album"),
                      stdout: ["Album/01.mp3;Various Artists;J. S. Bach;1;3;2021-05-04",
                               "Album/02.mp3;Various Artists;Hildegard von Bingen;2;1;2021"])
        // ID3v2.3 (TYER for the date, UTF-16 text), and a file with nothing but ID3v1 (Latin-1 text).
        expectSuccess(try daemon.mpc("-f", "%file%;%artist%;%track%;%disc%;%date%;%composer%", "find", "artist", "Old"),
                      stdout: ["Other/03.mp3;Old;7;2;1999;Arvo Pärt"])
        expectSuccess(try daemon.mpc("-f", "%file%;%artist%;%title%;%album%;%track%;%date%", "find", "artist", "V One"),
                      stdout: ["Other/04.mp3;V One;Only v1;V1 Albüm;4;1987"])
        // A song without AlbumArtist is listed under its Artist, as MPD lists it.
        expectSuccess(try daemon.mpc("list", "albumartist"), stdout: ["Old", "V One", "Various Artists"])
        expectSuccess(try daemon.mpc("list", "composer"), stdout: ["", "Arvo Pärt", "Hildegard von Bingen", "J. S. Bach"])

        // mpc asks with its default chunk size (8192): the 10,000-byte cover comes in two chunks.
        #expect(try library.mpcPicture(daemon, "albumart", "Album/01.mp3") == library.cover)
        #expect(try library.mpcPicture(daemon, "readpicture", "Album/01.mp3") == library.picture)
        let missing = try daemon.mpc("albumart", "Other/03.mp3")
        #expect(missing.status != 0 && missing.stderr.contains("No file exists"), "\(missing)")
    }

    @Test func pythonMPD2ReadsPicturesInSmallChunksAndFindsByTheNewTags() throws {
        let library = try TaggedLibrary()
        let daemon = try library.daemon()
        defer { daemon.stop() }
        let out = library.root.appendingPathComponent("received")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let run = try ToolRun.run("/usr/bin/python3", [Self.scripts.appendingPathComponent("mpd2_library_tags.py").path, daemon.socket, out.path],
                                  timeout: 60)
        #expect(run.status == 0, "\(run)")
        let steps = Steps(run.stdout)

        _ = steps.ok("binarylimit")
        // python-mpd2 keeps asking for the next chunk until it has `size` bytes (and drops `size`).
        let albumArt = steps.ok("albumart") as? [String: Any]
        #expect(albumArt?.count == 1 && albumArt?["length"] as? Int == 10000, "\(String(describing: albumArt))")
        #expect(try Data(contentsOf: out.appendingPathComponent("albumart.bin")) == Data(library.cover))
        let picture = steps.ok("readpicture") as? [String: Any]
        #expect(picture?.count == 2 && picture?["type"] as? String == "image/jpeg" && picture?["length"] as? Int == 5000,
                "\(String(describing: picture))")
        #expect(try Data(contentsOf: out.appendingPathComponent("readpicture.bin")) == Data(library.picture))
        #expect((steps.ok("readpicture-none") as? [String: Any])?.isEmpty == true, "no embedded picture: an empty reply")
        #expect(steps.results["albumart-none"]?.error?.contains("No file exists") == true, "\(String(describing: steps.results["albumart-none"]))")

        #expect(steps.ok("list-albumartist") as? [String] == ["Old", "V One", "Various Artists"])
        #expect(steps.ok("find-composer") as? [String] == ["Album/01.mp3"])
        #expect(steps.ok("find-albumartist") as? [String] == ["Album/01.mp3", "Album/02.mp3"])
        #expect(steps.ok("song-tags") as? [String: String] == [
            "albumartist": "Various Artists", "composer": "J. S. Bach", "disc": "1", "track": "3", "date": "2021-05-04",
            "artist": "Solo Artist", "musicbrainz_albumid": "0f2b6b4e-album",
        ])
        // python-mpd2 folds the groups into one dict of lists.
        let discs = steps.ok("count-group-disc") as? [String: Any]
        #expect(discs?["disc"] as? [String] == ["1", "2"], "\(String(describing: discs))")
        #expect(steps.results["sticker"]?.error?.contains("sticker database is disabled") == true)
        _ = steps.ok("ping")
    }

    /// `update DIR` reads that directory again, and nothing else: a changed file elsewhere
    /// keeps its old tags until it is updated itself. The reply is `updating_db: N`, and a
    /// change is reported to idle clients as `database`. A file retagged within the same
    /// second, to the same size (a tag editor writes within the tag's padding), is read again.
    @Test func updateOfADirectoryOrFileRescansOnlyIt() throws {
        let library = try TaggedLibrary()
        let daemon = try library.daemon()
        defer { daemon.stop() }

        let first = library.music.appendingPathComponent("Album/01.mp3").path
        let before = try #require(FileStatus(first))
        try library.tag("Album/01.mp3", "TPE1=Solo Artist", "TPE2=Changed Artists", "TIT2=First", "TALB=Tagged Album")
        try #require(FileStatus(first)?.size == before.size, "the retag is meant to keep the size (same-length value, padding)")
        try TestMedia.setModificationTime(first, seconds: before.seconds, nanoseconds: (before.nanoseconds + 500_000_000) % 1_000_000_000)
        try library.tag("Other/03.mp3", "--v23", "TPE1=Changed Old")
        try FileManager.default.removeItem(at: library.music.appendingPathComponent("Album/02.mp3"))
        try library.copyTone(to: "Album/05.mp3")
        try library.tag("Album/05.mp3", "TPE1=Newcomer", "TALB=Tagged Album")

        expectSuccess(try daemon.mpc("-q", "update", "--wait", "Album"), stdout: [])
        expectSuccess(try daemon.mpc("listall"), stdout: ["Album/01.mp3", "Album/05.mp3", "Other/03.mp3", "Other/04.mp3"])
        expectSuccess(try daemon.mpc("-f", "%file%;[%albumartist%];%artist%", "find", "album", "Tagged Album"),
                      stdout: ["Album/01.mp3;Changed Artists;Solo Artist", "Album/05.mp3;;Newcomer"])
        expectSuccess(try daemon.mpc("-f", "%artist%", "search", "filename", "Other/03.mp3"), stdout: ["Old"])

        let watcher = try daemon.client()
        try watcher.send("idle database\n")
        let client = try daemon.client()
        let reply = try client.request("update Other/03.mp3")
        #expect(reply.count == 2 && reply[0].wholeMatch(of: /updating_db: \d+/) != nil && reply[1] == "OK", "\(reply)")
        #expect(try watcher.readReply(timeout: 20) == ["changed: database", "OK"])
        #expect(try client.request("find file Other/03.mp3").contains("Artist: Changed Old"))
        #expect(try client.request("update ../Other") == ["ACK [2@0] {update} Malformed path"])
    }
}

extension TaggedLibrary {
    /// A daemon over the music directory, once its song database lists `songs` files.
    func daemon(songs: Int = 4, _ extra: [String] = []) throws -> ControlDaemon {
        // Without stickers: the tests check the refusal mpd gives without a sticker_file
        // (StickerDaemonTests has them on).
        let daemon = try ControlDaemon(["--music-directory", music.path, "--sticker-file", "off"] + extra)
        if waitUntil(timeout: 20, { (try? daemon.mpc("listall"))?.stdout.count == songs }) { return daemon }
        daemon.stop()
        throw UnixSocketError("the song database did not list \(songs) songs within 20 s")
    }

    /// What `mpc COMMAND URI` writes to its standard output, byte for byte.
    func mpcPicture(_ daemon: ControlDaemon, _ command: String, _ uri: String) throws -> [UInt8] {
        let out = root.appendingPathComponent("\(command)-\(UUID().uuidString).bin")
        let run = try ToolRun.run("/bin/sh", ["-c", "exec /usr/bin/mpc \"$1\" \"$2\" > \"$3\"", "sh", command, uri, out.path],
                                  environment: ["MPD_HOST": daemon.socket], timeout: 20)
        #expect(run.status == 0, "\(run)")
        return Array(try Data(contentsOf: out))
    }
}
