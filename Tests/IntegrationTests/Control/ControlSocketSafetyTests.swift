import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The socket file's safety, and `add` paths that try to leave the music directory.
/// (A stale socket file replaced: DaemonInProcessTests' suite of the same name.)
@Suite(.serialized) struct ControlSocketSafetyTests {
    @Test func theSocketIsPrivateAndASecondDaemonOnItIsRefused() throws {
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path])
        defer { daemon.stop() }
        SocketFile.expectPrivate(daemon.socket)

        let second = try ChildProcess(["--music-directory", TestMedia.directory.path, "--output", "null",
                                       "--socket", daemon.socket])
        defer { second.terminate() }
        let status = second.wait(timeout: 10)
        #expect(status != nil && status != 0, "a second daemon on \(daemon.socket) exited \(String(describing: status)); stderr: \(second.standardError)")
        #expect(second.standardError.contains(daemon.socket), "stderr must name the socket: \(second.standardError.debugDescription)")

        // The first daemon still owns the path: new clients reach it.
        #expect(daemon.process.isRunning)
        SocketFile.expectPrivate(daemon.socket)
        let client = try daemon.client()
        #expect(try client.request("ping") == ["OK"])
        let mpc = try daemon.mpc()
        expectSuccess(mpc, stdout: [ControlSocketExpectations.volumeLine])
    }

    /// A clean exit (SIGTERM, or `--once` at the queue's end) removes the socket file it bound:
    /// a script that waits for the socket to appear is not fooled by the old one.
    @Test func aCleanExitRemovesTheSocketFile() throws {
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path])
        defer { daemon.stop() }
        SocketFile.expectPrivate(daemon.socket)
        daemon.process.send(SIGTERM)
        #expect(daemon.process.wait(timeout: 10) == 0, "stderr: \(daemon.process.standardError)")
        #expect(SocketFile.mode(daemon.socket) == nil, "\(daemon.socket) is still there after SIGTERM")

        let socket = daemon.directory.appendingPathComponent("once.sock").path
        let tone = try TestMedia.makeTone(seconds: 0.5, in: daemon.directory, name: "short")
        let once = try ChildProcess(["--once", "--output", "null", "--socket", socket, tone.path])
        #expect(once.wait(timeout: 30) == 0, "stderr: \(once.standardError)")
        #expect(SocketFile.mode(socket) == nil, "\(socket) is still there after --once")
    }

    /// A daemon refused at start (another one answers on the path) leaves the other's socket alone,
    /// and so does the first one's exit once a new file took the path.
    @Test func anExitRemovesOnlyTheSocketFileItBound() throws {
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path])
        defer { daemon.stop() }
        let second = try ChildProcess(["--music-directory", TestMedia.directory.path, "--output", "null",
                                       "--socket", daemon.socket])
        #expect(second.wait(timeout: 10) != 0)
        SocketFile.expectPrivate(daemon.socket)
        let client = try daemon.client()
        #expect(try client.request("ping") == ["OK"])

        // The path now names another socket file: the first daemon's exit must not remove it.
        unlink(daemon.socket)
        try UnixSocketClient.makeStaleSocketFile(at: daemon.socket)
        daemon.process.send(SIGTERM)
        #expect(daemon.process.wait(timeout: 10) == 0, "stderr: \(daemon.process.standardError)")
        #expect(SocketFile.mode(daemon.socket)?.isSocket == true, "the daemon removed a socket file it did not bind")
    }

    /// `add` resolves inside the music directory only: no `..`, no absolute paths, no
    /// symbolic links out of it (a file that exists outside is refused like a missing one).
    @Test func addNeverLeavesTheMusicDirectory() throws {
        let music = try TestMedia.scratchDirectory()
        let outside = try TestMedia.scratchDirectory()
        defer {
            try? FileManager.default.removeItem(at: music)
            try? FileManager.default.removeItem(at: outside)
        }
        _ = try TestMedia.makeTone(seconds: 0.5, in: music, name: "inside")
        let outsideFile = try TestMedia.makeTone(seconds: 0.5, frequency: 880, in: outside, name: "outside")
        try FileManager.default.createDirectory(at: music.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: music.appendingPathComponent("escape-dir").path,
                                                   withDestinationPath: outside.path)
        try FileManager.default.createSymbolicLink(atPath: music.appendingPathComponent("escape.mp3").path,
                                                   withDestinationPath: outsideFile.path)
        try FileManager.default.createSymbolicLink(atPath: music.appendingPathComponent("etc").path,
                                                   withDestinationPath: "/etc")
        // music and outside are siblings: this relative path names an existing file.
        let traversal = "sub/../../\(outside.lastPathComponent)/outside.mp3"
        #expect(FileManager.default.fileExists(atPath: music.appendingPathComponent(traversal).path))

        let daemon = try ControlDaemon(["--music-directory", music.path])
        defer { daemon.stop() }
        let client = try daemon.client()
        let refused = ["../etc", "/etc/passwd", "/etc", "..", "sub/../..", traversal, outsideFile.path,
                       "escape-dir", "escape-dir/outside.mp3", "escape.mp3", "etc", "etc/passwd"]
        for path in refused {
            let reply = try client.request("add \"\(path)\"")
            let isNoSuchDirectory = reply == ["ACK [50@0] {add} No such directory"]
            let isPermission = reply.count == 1 && reply[0].wholeMatch(of: #/ACK \[4@0\] \{add\} .+/#) != nil
            #expect(isNoSuchDirectory || isPermission, "add \"\(path)\" → \(reply)")
        }
        // The same through mpc (a list with one add; mpc prints `error adding`).
        let mpc = try daemon.mpc("add", "../etc")
        #expect(mpc.status == 1 && mpc.stdout == [], "\(mpc)")
        // `No such directory`, or the message of a permission ACK: one line either way.
        #expect(mpc.stderr.hasPrefix("error adding ../etc: ") && mpc.stderr.filter { $0 == "\n" }.count == 1, "\(mpc)")

        // Nothing was queued; the whole library is the one file really inside.
        #expect(try client.request("playlistinfo") == ["OK"])
        #expect(try client.request("add \"inside.mp3\"") == ["OK"])
        #expect(try client.request("add \"\"") == ["OK"])
        let files = try client.request("playlistinfo").filter { $0.hasPrefix("file: ") }
        #expect(files == ["file: inside.mp3", "file: inside.mp3"], "the library must not follow links out of it")
        #expect(daemon.process.isRunning, "stderr: \(daemon.process.standardError)")
    }
}
