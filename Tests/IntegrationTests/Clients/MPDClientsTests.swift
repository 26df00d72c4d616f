import Foundation
import TestSupport
import Testing

/// The commands beyond mpc's basics, driven by the real clients: mpc for what it has
/// (modes, moves, the database, stored playlists), python-mpd2 for the rest (ids, versions,
/// filters, priorities, messages). The terminal clients are in ``TerminalClientsTests``.
@Suite(.serialized) struct MPDClientsTests {
    typealias Steps = ControlSocketPythonTests.Steps

    static let script = TestMedia.integrationTests
        .appendingPathComponent("Scripts/mpd2_library.py")

    /// A daemon over Media/ with an empty queue, once its song database lists every file.
    static func daemonWithDatabase() throws -> ControlDaemon {
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path])
        let deadline = ChildProcess.now() + 20
        while ChildProcess.now() < deadline {
            if (try? daemon.mpc("ls"))?.stdout.count == TestMedia.all.count { return daemon }
            usleep(50_000)
        }
        daemon.stop()
        throw UnixSocketError("the song database did not list Media/ within 20 s")
    }

    @Test func mpcModesMovesDatabaseAndStoredPlaylists() throws {
        let daemon = try Self.daemonWithDatabase()
        defer { daemon.stop() }
        let names = TestMedia.all.map(\.lastPathComponent)
        #expect(try daemon.mpc("ls").stdout == names)
        #expect(try daemon.mpc("listall").stdout == names)
        #expect(try daemon.mpc("list", "album").stdout == ["queueplayerd samples"])
        #expect(try daemon.mpc("search", "title", "night").stdout == ["04-night-pluck.mp3"])
        #expect(try daemon.mpc("find", "artist", "queueplayerd project").stdout == names)
        #expect(try daemon.mpc("stats").stdout.contains("Songs:        4"))

        _ = try daemon.mpc("add", "/")
        for mode in ["repeat", "random", "single", "consume"] { _ = try daemon.mpc(mode, "on") }
        let status = try daemon.mpc("status").stdout.last ?? ""
        #expect(status.contains("repeat: on") && status.contains("random: on") && status.contains("single: on")
                && status.contains("consume: on"), "\(status)")
        for mode in ["repeat", "random", "single", "consume"] { _ = try daemon.mpc(mode, "off") }

        _ = try daemon.mpc("move", "1", "4")
        let moved = try daemon.mpc("playlist", "-f", "%file%").stdout
        #expect(moved == [names[1], names[2], names[3], names[0]])
        _ = try daemon.mpc("del", "2")
        let kept = [names[1], names[3], names[0]]
        #expect(try daemon.mpc("playlist", "-f", "%file%").stdout == kept)

        _ = try daemon.mpc("save", "mix")
        #expect(try daemon.mpc("lsplaylists").stdout == ["mix"])
        _ = try daemon.mpc("clear")
        _ = try daemon.mpc("load", "mix")
        #expect(try daemon.mpc("playlist", "-f", "%file%").stdout == kept, "a stored playlist loads in its order")

        // `next` is the user asking for another song: single mode aside, and past the end, stopped with no song.
        _ = try daemon.mpc("repeat", "on")
        _ = try daemon.mpc("single", "on")
        _ = try daemon.mpc("play", "1")
        _ = try daemon.mpc("next")
        #expect(try daemon.mpc("current", "-f", "%file%").stdout == [kept[1]], "single + repeat: next moves on")
        _ = try daemon.mpc("repeat", "off")
        _ = try daemon.mpc("single", "off")
        _ = try daemon.mpc("play", "3")
        _ = try daemon.mpc("next")
        #expect(try daemon.mpc("status").stdout == [ControlSocketExpectations.volumeLine], "next on the last song stops")
        _ = try daemon.mpc("rm", "mix")
        #expect(try daemon.mpc("lsplaylists").stdout.isEmpty)

        let crossfade = try daemon.mpc("crossfade", "3")
        #expect(crossfade.status != 0 && crossfade.stderr.contains("gapless"), "\(crossfade)")
    }

    @Test func pythonMPD2QueueIdsVersionsFiltersAndMessages() throws {
        let daemon = try Self.daemonWithDatabase()
        defer { daemon.stop() }
        let run = try ToolRun.run("/usr/bin/python3", [Self.script.path, daemon.socket], timeout: 60)
        let steps = Steps(run.stdout)
        #expect(run.status == 0, "\(run)")
        let names = TestMedia.all.map(\.lastPathComponent)

        #expect(steps.ok("lsinfo") as? [String] == names)
        let groups = steps.ok("list-album-group-artist") as? [[String: Any]]
        #expect(groups?.count == 1 && groups?.first?["artist"] as? String == "queueplayerd project"
                && groups?.first?["album"] as? String == "queueplayerd samples", "\(String(describing: groups))")
        #expect(steps.ok("find-expression") as? [String] == ["01-morning-sine.mp3", "02-evening-triangle.mp3"])
        #expect(steps.ok("search-old-pairs") as? [String] == ["04-night-pluck.mp3"], "search folds case, matches substrings")
        #expect((steps.ok("count") as? [String: String])?["songs"] == "4")
        #expect(steps.results["find-bad-filter"]?.error?.contains("Unknown filter operator") == true)

        #expect(steps.ok("playlist-order") as? [String] == ["04-night-pluck.mp3", "01-morning-sine.mp3", "02-evening-triangle.mp3"])
        #expect(steps.ok("plchanges") as? [String] == ["04-night-pluck.mp3", "01-morning-sine.mp3", "02-evening-triangle.mp3"])
        #expect((steps.ok("plchanges-none") as? [Any])?.isEmpty == true)
        #expect(steps.ok("playlistid") as? String == "01-morning-sine.mp3")
        let firstID = steps.ok("addid") as? String
        #expect(steps.ok("current-after-playid") as? String == firstID)
        let moves = steps.ok("plchangesposid") as? [[String: String]] ?? []
        #expect(moves.contains { $0["cpos"] == "2" && $0["id"] == firstID }, "\(moves)")
        #expect(steps.ok("prio-shown") as? String == "200")
        #expect(steps.ok("playlistfind") as? [String] == ["04-night-pluck.mp3"])
        #expect(steps.results["deleteid-unknown"]?.error?.contains("No such song") == true)
        #expect(steps.ok("modes") as? [String: String] == ["repeat": "1", "random": "1", "single": "oneshot", "consume": "1"])
        _ = steps.ok("consume-oneshot-0.24")
        #expect(steps.results["crossfade-3"]?.error?.contains("gapless") == true)

        #expect(steps.ok("listplaylists") as? [String] == ["mix"])
        #expect((steps.ok("listplaylist") as? [String])?.count == 3)
        _ = steps.ok("playlistadd")
        _ = steps.ok("rename")
        #expect(steps.results["bad-name"]?.error?.contains("Bad playlist name") == true)
        _ = steps.ok("rm")

        #expect(steps.ok("channels") as? [String] == ["queueplayerd"])
        #expect(steps.ok("idle-message") as? [String] == ["message"], "a subscriber idling for messages is woken")
        let messages = steps.ok("readmessages") as? [[String: String]]
        #expect(messages == [["channel": "queueplayerd", "message": "{\"aps\":{\"content-available\":1}}"]])
        #expect(steps.results["sendmessage-nobody"]?.error?.contains("nobody is subscribed") == true)
    }
}
