import Foundation
import MPDProtocol
import Testing
@testable import DaemonCore

@Suite struct StoredPlaylistsTests {
    /// A playlist directory of its own, removed when the test ends.
    final class Scratch {
        let root: URL
        let playlists: StoredPlaylists
        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("playlists-\(UUID().uuidString)")
            playlists = StoredPlaylists(directory: root.appendingPathComponent("playlists"))
        }
        deinit { try? FileManager.default.removeItem(at: root) }
        func file(_ name: String) -> String {
            (try? String(contentsOf: playlists.directory.appendingPathComponent(name), encoding: .utf8)) ?? "<none>"
        }
    }

    @Test func savedPlaylistsAreM3UFilesOfRelativeURIs() throws {
        let scratch = try Scratch()
        let playlists = scratch.playlists
        #expect(try playlists.list().isEmpty, "no directory yet: no playlists")
        try playlists.save(["a/one.mp3", "two.mp3"], as: "mix")
        #expect(scratch.file("mix.m3u") == "a/one.mp3\ntwo.mp3\n")
        #expect(try playlists.songs(in: "mix") == ["a/one.mp3", "two.mp3"])
        #expect(try playlists.list().map(\.name) == ["mix"])
        let attributes = try FileManager.default.attributesOfItem(atPath: playlists.directory.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
    }

    /// A file name may begin or end with spaces: the playlist keeps it as it is, as mpd does.
    @Test func spacesAtTheEdgesOfAFileNameAreKeptAndCRLFIsANewline() throws {
        let scratch = try Scratch()
        let playlists = scratch.playlists
        try playlists.save([" leading.mp3", "dir/trailing .mp3"], as: "spaces")
        #expect(try playlists.songs(in: "spaces") == [" leading.mp3", "dir/trailing .mp3"])
        try Data("a.mp3\r\n# comment\r\n\r\nb c.mp3\r\n".utf8)
            .write(to: playlists.directory.appendingPathComponent("windows.m3u"))
        #expect(try playlists.songs(in: "windows") == ["a.mp3", "b c.mp3"])
    }

    @Test func saveModes() throws {
        let playlists = try Scratch().playlists
        try playlists.save(["a.mp3"], as: "p")
        #expect(throws: MPDError(.exist, "Playlist already exists")) { try playlists.save(["b.mp3"], as: "p") }
        try playlists.save(["b.mp3"], as: "p", mode: .append)
        #expect(try playlists.songs(in: "p") == ["a.mp3", "b.mp3"])
        try playlists.save(["c.mp3"], as: "p", mode: .replace)
        #expect(try playlists.songs(in: "p") == ["c.mp3"])
        #expect(throws: MPDError(.noExist, "No such playlist")) { try playlists.save(["x"], as: "q", mode: .append) }
    }

    @Test func editingAStoredPlaylist() throws {
        let playlists = try Scratch().playlists
        try playlists.add(["a", "b"], to: "p")                 // created by playlistadd
        try playlists.add(["c", "d", "e"], to: "p")
        try playlists.add(["first"], to: "p", at: 0)
        #expect(try playlists.songs(in: "p") == ["first", "a", "b", "c", "d", "e"])
        try playlists.delete(1..<3, from: "p")
        #expect(try playlists.songs(in: "p") == ["first", "c", "d", "e"])
        try playlists.move(0..<2, to: 2, in: "p")
        #expect(try playlists.songs(in: "p") == ["d", "e", "first", "c"])
        #expect(throws: MPDError(.argument, "Bad song index")) { try playlists.delete(4..<5, from: "p") }
        #expect(throws: MPDError(.argument, "Bad range")) { try playlists.move(0..<1, to: 4, in: "p") }
        #expect(throws: MPDError(.argument, "Bad position")) { try playlists.add(["x"], to: "p", at: 9) }
        try playlists.clear("p")
        #expect(try playlists.songs(in: "p").isEmpty)
    }

    @Test func renameAndRemove() throws {
        let playlists = try Scratch().playlists
        try playlists.save(["a"], as: "old")
        try playlists.save(["b"], as: "taken")
        #expect(throws: MPDError(.exist, "Playlist already exists")) { try playlists.rename("old", to: "taken") }
        try playlists.rename("old", to: "new")
        #expect(try playlists.list().map(\.name) == ["new", "taken"])
        #expect(throws: MPDError(.noExist, "No such playlist")) { try playlists.rename("old", to: "other") }
        try playlists.remove("new")
        #expect(throws: MPDError(.noExist, "No such playlist")) { try playlists.remove("new") }
        #expect(throws: MPDError(.noExist, "No such playlist")) { _ = try playlists.songs(in: "new") }
    }

    @Test func namesThatCouldLeaveTheDirectoryAreRefusedAndNothingIsWritten() throws {
        let scratch = try Scratch()
        let playlists = scratch.playlists
        for name in ["", "../escape", "a/b", "/etc/passwd", "line\nbreak", "nul\0"] {
            #expect(throws: MPDError(.argument, "Bad playlist name"), "\(name.debugDescription)") {
                try playlists.save(["x"], as: name)
            }
        }
        let written = FileManager.default.enumerator(atPath: scratch.root.path)?.allObjects as? [String] ?? []
        #expect(written.allSatisfy { !$0.contains("escape") && !$0.contains("passwd") }, "\(written)")
        try playlists.save(["x"], as: "..")
        #expect(try playlists.list().map(\.name) == [".."], "'..' is a name like any other: '...m3u' in the directory")
    }

    @Test func commentsAndBlankLinesAreNotSongsAndOtherFilesAreNotPlaylists() throws {
        let scratch = try Scratch()
        let playlists = scratch.playlists
        try playlists.save([], as: "made")
        try "#EXTM3U\n\none.mp3\r\n  two.mp3\n#EXTINF:1,x\n".write(
            to: playlists.directory.appendingPathComponent("hand.m3u"), atomically: true, encoding: .utf8)
        try "x".write(to: playlists.directory.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: playlists.directory.appendingPathComponent("dir.m3u"), withIntermediateDirectories: true)
        #expect(try playlists.songs(in: "hand") == ["one.mp3", "  two.mp3"], "taken as they are, as mpd reads them")
        #expect(try playlists.list().map(\.name) == ["hand", "made"])
    }
}
