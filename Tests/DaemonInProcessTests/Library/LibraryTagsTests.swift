import Foundation
import TestSupport
import Testing

/// The replies to bad input over a raw connection where the bytes matter, on a library tagged
/// by mutagen at test time. (The tags, cover art and `update DIR` through the real clients, mpc
/// and python-mpd2: IntegrationTests' suite of the same name.)
@Suite(.serialized) struct LibraryTagsTests {
    @Test func badInputGetsMPDsRepliesAndNothingOutsideTheMusicDirectoryIsRead() throws {
        let library = try TaggedLibrary()
        // Inside the music directory, links to files outside it.
        let outside = library.root.appendingPathComponent("outside.mp3")
        try FileManager.default.copyItem(at: library.music.appendingPathComponent("Album/01.mp3"), to: outside)
        try FileManager.default.createSymbolicLink(at: library.music.appendingPathComponent("Other/link.mp3"), withDestinationURL: outside)
        try Data(library.cover).write(to: library.root.appendingPathComponent("secret.jpg"))
        try FileManager.default.createSymbolicLink(at: library.music.appendingPathComponent("Other/cover.jpg"),
                                                   withDestinationURL: library.root.appendingPathComponent("secret.jpg"))
        let daemon = try library.inProcessDaemon(songs: 4)
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
