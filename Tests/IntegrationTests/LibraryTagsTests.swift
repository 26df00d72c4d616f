import Foundation
import TestSupport
import Testing

/// The song database's tags beyond the first six (AlbumArtist, Composer, Disc, ...), read
/// with libmpg123 from files tagged by mutagen at test time; cover art (`albumart`,
/// `readpicture`) in chunks; `update DIR`; and the replies to bad input, all through the
/// real clients (mpc, python-mpd2) and a raw connection where the bytes matter.
@Suite(.serialized) struct LibraryTagsTests {
    typealias Steps = ControlSocketPythonTests.Steps

    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts")

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

    @Test func badInputGetsMPDsRepliesAndNothingOutsideTheMusicDirectoryIsRead() throws {
        let library = try TaggedLibrary()
        // Inside the music directory, links to files outside it.
        let outside = library.root.appendingPathComponent("outside.mp3")
        try FileManager.default.copyItem(at: library.music.appendingPathComponent("Album/01.mp3"), to: outside)
        try FileManager.default.createSymbolicLink(at: library.music.appendingPathComponent("Other/link.mp3"), withDestinationURL: outside)
        try Data(library.cover).write(to: library.root.appendingPathComponent("secret.jpg"))
        try FileManager.default.createSymbolicLink(at: library.music.appendingPathComponent("Other/cover.jpg"),
                                                   withDestinationURL: library.root.appendingPathComponent("secret.jpg"))
        let daemon = try library.daemon(songs: 4)
        defer { daemon.stop() }
        let client = try daemon.client()

        #expect(try client.request("albumart Other/03.mp3 0") == ["ACK [50@0] {albumart} No file exists"],
                "a cover.jpg that links out of the music directory is not there")
        #expect(try client.request("albumart Album/01.mp3 10001") == ["ACK [2@0] {albumart} Offset too large"])
        #expect(try client.request("albumart Album/01.mp3 10000") == ["size: 10000", "binary: 0", "", "OK"])
        #expect(try client.request("readpicture Album/01.mp3 5001") == ["ACK [2@0] {readpicture} Bad file offset"])
        #expect(try client.request("readpicture Album/02.mp3 0") == ["OK"], "no embedded picture")
        #expect(try client.request("readpicture Album/missing.mp3 0") == ["ACK [50@0] {readpicture} No such file"])
        #expect(try client.request("readpicture Album/cover.jpg 0") == ["ACK [50@0] {readpicture} Failed to load file"])
        for uri in ["../outside.mp3", "Album/../../outside.mp3", outside.path, "/etc/passwd", "Other/link.mp3"] {
            #expect(try client.request("readpicture \"\(uri)\" 0") == ["ACK [4@0] {readpicture} Access denied"], "\(uri)")
        }
        // Outside the music directory there is no cover, as mpd 0.23 answers a client on its
        // Unix socket (CoverFolderTests has the TCP side: an absolute path is Access denied).
        for uri in ["../outside.mp3", "/etc/passwd"] {
            #expect(try client.request("albumart \"\(uri)\" 0") == ["ACK [50@0] {albumart} No file exists"], "\(uri)")
        }
        // An absolute path inside the music directory is taken as relative to it.
        #expect(try client.request("albumart \"\(library.music.path)/Album/01.mp3\" 10000") == ["size: 10000", "binary: 0", "", "OK"])

        // binarylimit sizes the chunk; the bytes arrive as they are in the file.
        #expect(try client.request("binarylimit 1024") == ["OK"])
        #expect(try client.binaryReply("albumart Album/01.mp3 8192") == (["size: 10000"], Array(library.cover[8192..<9216])))
        #expect(try client.binaryReply("readpicture Album/01.mp3 4096") == (["size: 5000", "type: image/jpeg"], Array(library.picture[4096...])))

        #expect(try client.request("sticker get song Album/01.mp3 rating") == ["ACK [5@0] {sticker} sticker database is disabled"])
        let commands = try client.request("commands")
        #expect(commands.contains("command: albumart") && commands.contains("command: readpicture"))
        #expect(!commands.contains("command: sticker"), "commands lists only what works")
        #expect(try client.request("ping") == ["OK"])
    }
}

/// A music directory of four tagged files, made at test time: a tone encoded by lame,
/// tagged by mutagen (`Scripts/tag_mp3.py`), and the pictures (pseudo-random bytes that
/// include newlines, NULs and `OK`, so that any framing by lines would break them).
struct TaggedLibrary {
    let root: URL
    let music: URL
    let tone: URL
    /// The embedded picture of Album/01.mp3 (5,000 bytes).
    let picture: [UInt8]
    /// Album/cover.jpg (10,000 bytes).
    let cover: [UInt8]

    static let tagScript = LibraryTagsTests.scripts.appendingPathComponent("tag_mp3.py")

    init() throws {
        root = try TestMedia.scratchDirectory()
        music = root.appendingPathComponent("music")
        for directory in ["Album", "Other"] {
            try FileManager.default.createDirectory(at: music.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        tone = try TestMedia.makeTone(seconds: 1, in: root, name: "tone")
        picture = Self.bytes(5000, seed: 1)
        cover = Self.bytes(10_000, seed: 2)
        let pictureFile = root.appendingPathComponent("picture.bin")
        try Data(picture).write(to: pictureFile)
        try Data(cover).write(to: music.appendingPathComponent("Album/cover.jpg"))

        for name in ["Album/01.mp3", "Album/02.mp3", "Other/03.mp3", "Other/04.mp3"] { try copyTone(to: name) }
        try tag("Album/01.mp3", "TPE1=Solo Artist", "TPE2=Various Artists", "TCOM=J. S. Bach", "TPOS=1/2", "TRCK=03/12",
                "TIT2=First", "TALB=Tagged Album", "TDRC=2021-05-04", "TCON=Baroque",
                "TXXX:MusicBrainz Album Id=0f2b6b4e-album", "APIC=image/jpeg:\(pictureFile.path)")
        try tag("Album/02.mp3", "TPE1=Choir", "TPE2=Various Artists", "TCOM=Hildegard von Bingen", "TPOS=2/2", "TRCK=1",
                "TIT2=Second", "TALB=Tagged Album", "TDRC=2021")
        try tag("Other/03.mp3", "--v23", "TPE1=Old", "TDRC=1999", "TRCK=07/10", "TPOS=2", "TCOM=Arvo Pärt")
        try tag("Other/04.mp3", "--v1", "TPE1=V One", "TIT2=Only v1", "TALB=V1 Albüm", "TDRC=1987", "TRCK=4")
    }

    func copyTone(to name: String) throws {
        try FileManager.default.copyItem(at: tone, to: music.appendingPathComponent(name))
    }

    /// Replaces the tag of `name` (see `tag_mp3.py` for the arguments).
    func tag(_ name: String, _ arguments: String...) throws {
        try TestMedia.run("/usr/bin/python3", [Self.tagScript.path, music.appendingPathComponent(name).path] + arguments)
    }

    /// A daemon over the music directory, once its song database lists `songs` files.
    func daemon(songs: Int = 4, _ extra: [String] = []) throws -> ControlDaemon {
        // Without stickers: the tests check the refusal mpd gives without a sticker_file
        // (StickerDaemonTests has them on).
        let daemon = try ControlDaemon(["--music-directory", music.path, "--sticker-file", "off"] + extra)
        let deadline = ChildProcess.now() + 20
        while ChildProcess.now() < deadline {
            if (try? daemon.mpc("listall"))?.stdout.count == songs { return daemon }
            usleep(50_000)
        }
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

    /// Deterministic bytes that start like a JPEG file and hold every byte value.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x0A, 0x00] + Array("\nOK\n".utf8)
        while bytes.count < count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(UInt8(truncatingIfNeeded: state >> 33))
        }
        return bytes
    }
}

/// A file's size and modification time, to the nanosecond.
struct FileStatus {
    let size: Int64
    let seconds: Int
    let nanoseconds: Int

    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        size = Int64(info.st_size)
        seconds = info.st_mtim.tv_sec
        nanoseconds = info.st_mtim.tv_nsec
    }
}

extension UnixSocketClient {
    /// Sends `command` and reads a binary reply: its lines before `binary: N`, and the N
    /// bytes after it (followed by a newline and `OK`).
    func binaryReply(_ command: String, timeout: Double = 5) throws -> (lines: [String], payload: [UInt8]) {
        try send(command + "\n")
        var lines: [String] = []
        while true {
            guard let line = try readLine(timeout: timeout) else { throw UnixSocketError("end of file after \(lines)") }
            if line.hasPrefix("ACK ") { throw UnixSocketError(line) }
            if let count = line.wholeMatch(of: /binary: (\d+)/).flatMap({ Int($0.1) }) {
                var received: [UInt8] = []
                let deadline = ChildProcess.now() + timeout
                while received.count < count + 4, ChildProcess.now() < deadline {
                    if case .data(let bytes) = receive(timeout: max(0.001, deadline - ChildProcess.now())) { received += bytes }
                }
                guard received.count == count + 4, received.suffix(4) == Array("\nOK\n".utf8) else {
                    throw UnixSocketError("binary: \(count), then \(received.count) bytes, not ending in a newline and OK")
                }
                return (lines, Array(received.prefix(count)))
            }
            lines.append(line)
        }
    }
}
