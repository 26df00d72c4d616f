import DaemonCore
import Foundation
import TestSupport
import Testing

/// `albumart` on a folder, as Cantata asks for a cover (`albumart "Artist - Album/" 0`): the
/// folder's cover file by MPD 0.23's names and order (`cover.png`, `cover.jpg`,
/// `cover.webp`), with or without the trailing `/`; `ACK [50@0]` when it has none; nothing
/// read outside the music directory. Through a raw connection (the bytes; through python-mpd2:
/// IntegrationTests' suite of the same name).
@Suite(.serialized) struct CoverFolderTests {
    typealias Folders = CoverFolders

    @Test func aFolderWithOrWithoutItsSlashSendsItsCoverByMPDsNamesAndOrder() throws {
        let folders = try Folders()
        let daemon = try folders.library.inProcessDaemon()
        defer { daemon.stop() }
        let client = try daemon.client()
        #expect(try client.request("binarylimit 65536") == ["OK"])

        #expect(try client.binaryReply("albumart \"Artist - Album/\" 0") == (["size: 3000"], folders.png), "cover.png comes first")
        #expect(try client.binaryReply("albumart \"Artist - Album\" 0") == (["size: 3000"], folders.png))
        #expect(try client.binaryReply("albumart \"Artist - Album/\" 2000") == (["size: 3000"], Array(folders.png[2000...])))
        #expect(try client.binaryReply("albumart \"Webp Only/\" 0") == (["size: 5000"], folders.webp))
        #expect(try client.binaryReply("albumart Album/ 0") == (["size: 10000"], folders.library.cover))
        // A song's cover is its folder's, whether the song exists or not.
        #expect(try client.binaryReply("albumart \"Artist - Album/missing.mp3\" 0") == (["size: 3000"], folders.png))
        #expect(try client.binaryReply("albumart \"Escaping/\" 0") == (["size: 4000"], folders.jpg),
                "a cover.png that links out of the music directory is passed over")

        #expect(try client.request("albumart Empty/ 0") == ["ACK [50@0] {albumart} No file exists"])
        #expect(try client.request("albumart Empty 0") == ["ACK [50@0] {albumart} No file exists"])
        #expect(try client.request("albumart \"No Such Folder/\" 0") == ["ACK [50@0] {albumart} No file exists"])
        #expect(try client.request("albumart Linked/ 0") == ["ACK [50@0] {albumart} No file exists"],
                "a folder that links out of the music directory shows nothing of it")
        // A name that leads nowhere in the music directory has no cover, as mpd 0.23 answers a
        // client on its Unix socket (the absolute paths are local files it may name).
        for uri in ["../", "../x", "Album/../../", "/", "//", "/etc/passwd", "\(folders.library.root.path)/outside/", "./"] {
            #expect(try client.request("albumart \"\(uri)\" 0") == ["ACK [50@0] {albumart} No file exists"], "\(uri)")
        }
        // The music directory by its absolute path is the root folder, for a local client.
        #expect(try client.binaryReply("albumart \"\(folders.library.music.path)/Artist - Album/\" 0") == (["size: 3000"], folders.png))
        #expect(try client.request("albumart \"Artist - Album/\" 3001") == ["ACK [2@0] {albumart} Offset too large"])
        #expect(try client.request("ping") == ["OK"])
    }

    /// Over TCP an absolute path is a local file the client may not name, as mpd 0.23 answers
    /// (`ACK [4] Access denied`, even inside the music directory); `..` has no cover there
    /// either; the folder form works as on the Unix socket.
    @Test func overTCPAnAbsolutePathIsRefusedAndDotDotHasNoCover() throws {
        let folders = try Folders()
        let daemon = try folders.library.inProcessDaemon { $0.binds.append(try ListenAddress.parse("127.0.0.1:0")) }
        defer { daemon.stop() }
        var port: Int?
        #expect(waitUntil(timeout: 10) {
            port = NetworkProbe.port(in: daemon.standardError, after: "control socket: 127.0.0.1:")
            return port != nil
        }, "\(daemon.standardError)")
        let client = try UnixSocketClient(host: "127.0.0.1", port: try #require(port))
        #expect(try client.readLine()?.hasPrefix("OK MPD ") == true)
        #expect(try client.request("binarylimit 65536") == ["OK"])
        #expect(try client.binaryReply("albumart \"Artist - Album/\" 0") == (["size: 3000"], folders.png))
        for uri in ["/", "//", "/etc/passwd", "\(folders.library.music.path)/Artist - Album/"] {
            #expect(try client.request("albumart \"\(uri)\" 0") == ["ACK [4@0] {albumart} Access denied"], "\(uri)")
        }
        for uri in ["../", "../x", "Album/../../", "./"] {
            #expect(try client.request("albumart \"\(uri)\" 0") == ["ACK [50@0] {albumart} No file exists"], "\(uri)")
        }
        #expect(try client.request("ping") == ["OK"])
    }
}
