import Foundation
import TestSupport
import Testing

/// `albumart` on a folder, as Cantata asks for a cover (`albumart "Artist - Album/" 0`): the
/// folder's cover file by MPD 0.23's names and order (`cover.png`, `cover.jpg`,
/// `cover.webp`), with or without the trailing `/`; `ACK [50@0]` when it has none; nothing
/// read outside the music directory. Through python-mpd2 (through a raw connection, the bytes:
/// DaemonInProcessTests' suite of the same name).
@Suite(.serialized) struct CoverFolderTests {
    typealias Folders = CoverFolders

    @Test func pythonMPD2FetchesAFoldersCoverInChunks() throws {
        let folders = try Folders()
        let daemon = try folders.library.daemon()
        defer { daemon.stop() }
        let out = folders.library.root.appendingPathComponent("received")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let script = LibraryTagsTests.scripts.appendingPathComponent("mpd2_cover_folder.py")
        let run = try ToolRun.run("/usr/bin/python3", [script.path, daemon.socket, out.path], timeout: 60)
        #expect(run.status == 0, "\(run)")
        let steps = ControlSocketPythonTests.Steps(run.stdout)

        _ = steps.ok("binarylimit")
        #expect((steps.ok("folder") as? [String: Any])?["length"] as? Int == 3000)
        #expect(try Data(contentsOf: out.appendingPathComponent("folder.bin")) == Data(folders.png))
        #expect((steps.ok("folder-no-slash") as? [String: Any])?["length"] as? Int == 3000)
        #expect(try Data(contentsOf: out.appendingPathComponent("folder-no-slash.bin")) == Data(folders.png))
        #expect(steps.results["folder-none"]?.error?.contains("[50@0] {albumart} No file exists") == true,
                "\(String(describing: steps.results["folder-none"]))")
        #expect(steps.results["folder-outside"]?.error?.contains("[50@0] {albumart} No file exists") == true,
                "\(String(describing: steps.results["folder-outside"]))")
        _ = steps.ok("ping")
    }
}
