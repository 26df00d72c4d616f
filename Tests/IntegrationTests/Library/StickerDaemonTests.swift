import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Stickers in the daemon as a process: python-mpd2 over TCP and mpc on the socket
/// set, find, sort and delete them; they survive a restart and follow a song renamed by
/// `update`; a sticker file that cannot be used is logged and the daemon runs on without them.
@Suite(.serialized) struct StickerDaemonTests {
    /// A music directory of four songs (as the transcript's: `a.mp3`, `b.mp3`, `dir/c.mp3`,
    /// `dirx/d.mp3`, each a different file of Media/) and a sticker file beside it, not yet made.
    final class Library {
        let root: URL
        let music: URL
        let stickers: URL

        init() throws {
            root = try TestMedia.scratchDirectory()
            music = root.appendingPathComponent("music")
            stickers = root.appendingPathComponent("sticker.sql")
            for directory in ["dir", "dirx"] {
                try FileManager.default.createDirectory(at: music.appendingPathComponent(directory), withIntermediateDirectories: true)
            }
            for (source, uri) in zip(TestMedia.all, ["a.mp3", "b.mp3", "dir/c.mp3", "dirx/d.mp3"]) {
                try FileManager.default.copyItem(at: source, to: music.appendingPathComponent(uri))
            }
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// A daemon over the music directory with `--sticker-file` (unless `stickerFile` is nil),
        /// once its song database lists `songs` files; clients on its Unix socket may do anything.
        /// `socket`: the Unix socket's path, when `extra` binds it (with a TCP address).
        func daemon(stickerFile: String?, songs: Int = 4, _ extra: [String] = [], socket: String? = nil) throws -> ControlDaemon {
            let daemon = try ControlDaemon(["--music-directory", music.path, "--no-state", "--local-permissions", "read,add,player,control,admin"]
                                           + (stickerFile.map { ["--sticker-file", $0] } ?? []) + extra, socket: socket)
            let listed = waitUntil(timeout: 20) { (try? daemon.mpc("listall"))?.stdout.count == songs }
            guard listed else {
                daemon.stop()
                throw UnixSocketError("the song database did not list \(songs) songs within 20 s")
            }
            return daemon
        }

        /// What the sqlite3 shell reads from the sticker file: `uri|name|value` lines.
        func rows() throws -> [String] {
            try ToolRun.run("/usr/bin/sqlite3", [stickers.path, "SELECT uri, name, value FROM sticker ORDER BY uri, name"],
                            timeout: 10).stdout
        }
    }

    /// The TCP port a daemon given `--bind 127.0.0.1:0` listens on, as its log names it.
    static func tcpPort(_ daemon: ControlDaemon) -> Int? {
        var port: Int?
        _ = waitUntil(timeout: 10) {
            port = NetworkProbe.port(in: daemon.process.standardError, after: "control socket: 127.0.0.1:")
            return port != nil
        }
        return port
    }

    @Test func pythonMPD2OverTCPSetsFindsSortsWindowsAndDeletesWithAdminOnly() throws {
        let library = try Library()
        // `--bind` replaces `--socket`: the Unix socket is bound again beside the TCP address.
        let socket = library.root.appendingPathComponent("control.sock").path
        let daemon = try library.daemon(stickerFile: library.stickers.path,
                                        ["--bind", socket, "--bind", "127.0.0.1:0",
                                         "--password", "reader@read,add,player,control",
                                         "--password", "full@read,add,player,control,admin"], socket: socket)
        defer { daemon.stop() }
        let port = try #require(Self.tcpPort(daemon), "\(daemon.process.standardError)")
        let script = TestMedia.integrationTests.appendingPathComponent("Scripts/mpd2_stickers.py")
        let run = try ToolRun.run("/usr/bin/python3", [script.path, "127.0.0.1", String(port)], timeout: 30)
        #expect(run.status == 0, "\(run)")
        let steps = ControlSocketPythonTests.Steps(run.stdout)
        // mpd's table: sticker is admin's; read (and all but admin) is not enough.
        #expect(steps.results["none.get"]?.error?.contains("you don't have permission for \"sticker\"") == true, "\(run)")
        #expect(steps.results["reader.get"]?.error?.contains("you don't have permission for \"sticker\"") == true, "\(run)")
        #expect(steps.ok("reader.commands") as? Bool == false)
        #expect(steps.ok("full.commands") as? Bool == true)
        #expect(steps.ok("get") as? String == "5")
        #expect(steps.ok("list") as? [String: String] == ["rating": "5", "playcount": "2"])
        let all = [["a.mp3", "rating=5"], ["b.mp3", "rating=10"], ["dir/c.mp3", "rating=3"], ["dirx/d.mp3", "rating=7"]]
        #expect(steps.ok("find.all") as? [[String]] == all)
        #expect(steps.ok("find.dir") as? [[String]] == [["dir/c.mp3", "rating=3"]])
        // Compared as text, as mpd compares: "10" < "5".
        #expect(steps.ok("find.less") as? [[String]] == [["b.mp3", "rating=10"], ["dir/c.mp3", "rating=3"]])
        #expect(steps.ok("find.greater") as? [[String]] == [["dirx/d.mp3", "rating=7"]])
        #expect(steps.ok("find.equal") as? [[String]] == [["b.mp3", "rating=10"]])
        #expect(steps.ok("find.sort") as? [[String]] == [all[1], all[3], all[0], all[2]])
        #expect(steps.ok("find.window") as? [[String]] == [all[0], all[3]])
        #expect(steps.results["find.badop"]?.error?.contains("bad operator") == true, "\(run)")
        #expect(steps.results["get.nosong"]?.error?.contains("[50@0] {sticker} No such song") == true, "\(run)")
        #expect(steps.results["get.none"]?.error?.contains("[50@0] {sticker} no such sticker") == true, "\(run)")
        #expect(steps.results["get.domain"]?.error?.contains("unknown sticker domain") == true, "\(run)")
        _ = steps.ok("delete.one")
        #expect(steps.results["delete.again"]?.error?.contains("no such sticker") == true, "\(run)")
        #expect(steps.ok("list.after") as? [String: String] == ["rating": "5"])
        // In the file, as mpd would find it.
        #expect(try library.rows() == ["a.mp3|rating|5", "b.mp3|rating|10", "dir/c.mp3|rating|3", "dirx/d.mp3|rating|7"])
    }

    @Test func mpcStickersSurviveARestartFollowARenameAndGoWithARemovedSong() throws {
        let library = try Library()
        do {
            let daemon = try library.daemon(stickerFile: library.stickers.path)
            defer { daemon.stop() }
            expectSuccess(try daemon.mpc("sticker", "a.mp3", "set", "rating", "5"), stdout: [])
            expectSuccess(try daemon.mpc("sticker", "a.mp3", "set", "playcount", "12"), stdout: [])
            expectSuccess(try daemon.mpc("sticker", "b.mp3", "set", "rating", "1"), stdout: [])
            expectSuccess(try daemon.mpc("sticker", "a.mp3", "get", "rating"), stdout: ["rating=5"])
            expectSuccess(try daemon.mpc("sticker", "", "find", "rating"), stdout: ["a.mp3: rating=5", "b.mp3: rating=1"])
        }
        // A daemon of its own, the same file.
        let daemon = try library.daemon(stickerFile: library.stickers.path)
        defer { daemon.stop() }
        expectSuccess(try daemon.mpc("sticker", "a.mp3", "list"), stdout: ["playcount=12", "rating=5"])

        // Renamed into another directory, and b.mp3 removed: one update of everything.
        try FileManager.default.createDirectory(at: library.music.appendingPathComponent("moved"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: library.music.appendingPathComponent("a.mp3"),
                                         to: library.music.appendingPathComponent("moved/a.mp3"))
        try FileManager.default.removeItem(at: library.music.appendingPathComponent("b.mp3"))
        let update = try daemon.mpc("--wait", "update", timeout: 30)
        #expect(update.status == 0, "\(update)")
        // At once: a sticker command after the update waits for the stickers to follow it.
        expectSuccess(try daemon.mpc("sticker", "moved/a.mp3", "get", "rating"), stdout: ["rating=5"])
        #expect(try library.rows() == ["moved/a.mp3|playcount|12", "moved/a.mp3|rating|5"])
        let old = try daemon.mpc("sticker", "a.mp3", "get", "rating")
        #expect(old.status == 1 && old.stderr.contains("No such song"), "\(old)")
        #expect(daemon.process.standardError.contains("stickers: followed 1 renamed and 1 removed songs (3 stickers)"),
                "\(daemon.process.standardError)")
    }

    @Test(arguments: [
        ("a file that is not a database", "garbage", "file is not a database"),
        ("a directory that does not exist", "missing", "unable to open database file"),
    ])
    func aStickerFileThatCannotBeUsedIsLoggedAndTheDaemonRunsWithoutStickers(_ what: String, _ kind: String, _ reason: String) throws {
        let library = try Library()
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let file = kind == "garbage" ? library.stickers : library.root.appendingPathComponent("missing/sticker.sql")
        if kind == "garbage" { try garbage.write(to: library.stickers) }
        let daemon = try library.daemon(stickerFile: file.path)
        defer { daemon.stop() }
        #expect(daemon.process.standardError.contains("stickers: cannot use \(file.path): \(reason)"), "\(what): \(daemon.process.standardError)")
        let refused = try daemon.mpc("sticker", "a.mp3", "get", "rating")
        #expect(refused.status == 1 && refused.stderr.contains("sticker database is disabled: \(reason)"), "\(what): \(refused)")
        let commands = try daemon.client().request("commands")
        #expect(commands.contains("command: status") && !commands.contains("command: sticker"), "\(what)")
        // Everything else goes on, and the file is left as it was.
        expectSuccess(try daemon.mpc("add", "b.mp3"), stdout: [])
        #expect(daemon.process.isRunning)
        if kind == "garbage" { #expect(try Data(contentsOf: library.stickers) == garbage) }
    }

    /// Without `--sticker-file`: `sticker.sql` in `$XDG_STATE_HOME/queueplayerd/`, made by the
    /// first sticker command (a `--no-state` daemon asked for none leaves no directory behind).
    @Test func theDefaultFileIsBesideTheStateMadeByTheFirstStickerCommandAndKept() throws {
        let library = try Library()
        let stateHome = library.root.appendingPathComponent("state")
        let directory = stateHome.appendingPathComponent("queueplayerd")
        let arguments = ["--music-directory", library.music.path, "--output", "null", "--no-state"]
        do {
            let daemon = try LifecycleDaemon(arguments, stateHome: stateHome)
            #expect(waitUntil(timeout: 20) { (try? daemon.request("stats"))?["songs"] == "4" })
            #expect(!FileManager.default.fileExists(atPath: directory.path), "nothing made before a sticker command")
            try daemon.request("sticker set song a.mp3 rating 5")
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("sticker.sql").path))
            let mode = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
            #expect(mode == 0o700)
            daemon.process.send(SIGTERM)
            #expect(daemon.process.wait(timeout: 5) == 0)
        }
        let again = try LifecycleDaemon(arguments, stateHome: stateHome)
        #expect(waitUntil(timeout: 20) { (try? again.request("stats"))?["songs"] == "4" })
        #expect(try again.request("sticker get song a.mp3 rating")["sticker"] == "rating=5")
    }

    /// A sticker file its user may not write answers reads and refuses writes with SQLite's
    /// words, logged. The daemon runs as `nobody` (root may write any file): skipped unless root.
    @Test func aReadOnlyStickerFileAnswersReadsAndRefusesWrites() throws {
        guard getuid() == 0 else { return }
        let library = try Library()
        do {
            let daemon = try library.daemon(stickerFile: library.stickers.path)
            defer { daemon.stop() }
            expectSuccess(try daemon.mpc("sticker", "a.mp3", "set", "rating", "4"), stdout: [])
        }
        let nobody: UInt32 = 65534
        #expect(chmod(library.stickers.path, 0o444) == 0)
        var environment: [String: String] = [:]
        for (variable, name) in zip(ChildProcess.userDirectoryVariables, ["home", "state", "runtime", "config"]) {
            let directory = library.root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            #expect(chown(directory.path, nobody, nobody) == 0)
            environment[variable] = directory.path
        }
        // nobody reads the music whatever the umask was.
        for path in [library.root, library.music, library.music.appendingPathComponent("dir"), library.music.appendingPathComponent("dirx")] {
            #expect(chmod(path.path, 0o755) == 0)
        }
        for uri in ["a.mp3", "b.mp3", "dir/c.mp3", "dirx/d.mp3"] {
            #expect(chmod(library.music.appendingPathComponent(uri).path, 0o644) == 0)
        }
        let socket = library.root.appendingPathComponent("runtime/control.sock").path
        let process = try ChildProcess(program: "/usr/bin/setpriv",
                                       ["--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", ChildProcess.daemonPath,
                                        "--music-directory", library.music.path, "--no-state", "--output", "null",
                                        "--sticker-file", library.stickers.path, "--socket", socket],
                                       environment: environment)
        defer { process.terminate() }
        #expect(UnixSocketClient.waitUntilAccepting(socket, timeout: 10), "\(process.standardError)")
        let client = try UnixSocketClient(path: socket)
        _ = try client.readLine(timeout: 5)
        #expect(waitUntil(timeout: 20) { (try? client.request("stats"))?.contains("songs: 4") == true })
        #expect(process.standardError.contains("stickers: \(library.stickers.path) is read-only"), "\(process.standardError)")
        #expect(try client.request("sticker get song a.mp3 rating") == ["sticker: rating=4", "OK"])
        #expect(try client.request("sticker find song \"\" rating") == ["file: a.mp3", "sticker: rating=4", "OK"])
        #expect(try client.request("sticker set song a.mp3 rating 5")
                == ["ACK [5@0] {sticker} sticker database: attempt to write a readonly database"])
        #expect(try client.request("sticker get song a.mp3 rating") == ["sticker: rating=4", "OK"])
        #expect(try client.request("ping") == ["OK"])
        #expect(process.standardError.contains("attempt to write a readonly database"))
    }

    @Test func offRefusesStickersAsMPDWithoutAStickerFile() throws {
        let library = try Library()
        let daemon = try library.daemon(stickerFile: "off")
        defer { daemon.stop() }
        let client = try daemon.client()
        #expect(try client.request("sticker get song a.mp3 rating") == ["ACK [5@0] {sticker} sticker database is disabled"])
        #expect(try !client.request("commands").contains("command: sticker"))
        #expect(!FileManager.default.fileExists(atPath: library.stickers.path))
    }
}
