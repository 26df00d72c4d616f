import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A FIFO named like a song (`x.mp3`) used to hang the daemon: `open(2)` of a FIFO waits
/// for a writer, on the controller's queue (`add`, queueing at start-up), so nothing played,
/// `status` got no answer and SIGTERM was not acted on. Only regular files are songs now;
/// anything else is refused without being opened in a way that blocks.
@Suite(.serialized) struct ControlSocketFIFOTests {
    typealias Expect = ControlSocketExpectations

    /// A scratch directory with copies of two of `Media/`'s items, `01-a.mp3` and `03-c.mp3`,
    /// and a FIFO `02-b.mp3` between them.
    static func directoryWithAFIFO() throws -> URL {
        let directory = try TestMedia.scratchDirectory()
        try FileManager.default.copyItem(at: TestMedia.directory.appendingPathComponent(Expect.media[0].file),
                                         to: directory.appendingPathComponent("01-a.mp3"))
        try FileManager.default.copyItem(at: TestMedia.directory.appendingPathComponent(Expect.media[2].file),
                                         to: directory.appendingPathComponent("03-c.mp3"))
        let fifo = directory.appendingPathComponent("02-b.mp3").path
        guard mkfifo(fifo, 0o644) == 0 else { throw UnixSocketError("mkfifo \(fifo): \(String(cString: strerror(errno)))") }
        return directory
    }

    /// Polls `status` until `state` is `expected` (or `timeout` passed); returns the last reply.
    static func waitForState(_ client: UnixSocketClient, _ expected: String, timeout: Double = 5) throws -> [String] {
        let deadline = ChildProcess.now() + timeout
        var reply: [String] = []
        repeat {
            reply = try client.request("status", timeout: 2)
            if replyValue(reply, "state") == expected { break }
            var none = pollfd()
            _ = poll(&none, 0, 20)
        } while ChildProcess.now() < deadline
        return reply
    }

    @Test func aFIFOInTheMediaDirectoryIsNotQueued() throws {
        let media = try Self.directoryWithAFIFO()
        defer { try? FileManager.default.removeItem(at: media) }
        let daemon = try ControlDaemon(["--media", media.path])
        defer { daemon.stop() }
        let client = try daemon.client()

        let status = try Self.waitForState(client, "play")
        #expect(replyValue(status, "state") == "play" && replyValue(status, "song") == "0", "status: \(status)")
        let files = try client.request("playlistinfo", timeout: 2).filter { $0.hasPrefix("file: ") }
        #expect(files == ["file: 01-a.mp3", "file: 03-c.mp3"])

        daemon.process.send(SIGTERM)
        #expect(daemon.process.wait(timeout: 5) != nil, "SIGTERM must end the daemon; stderr: \(daemon.process.standardError)")
    }

    @Test func mpcAddOfAFIFOIsRefusedAndEveryoneKeepsBeingAnswered() throws {
        let music = try Self.directoryWithAFIFO()
        defer { try? FileManager.default.removeItem(at: music) }
        let daemon = try ControlDaemon(["--music-directory", music.path])
        defer { daemon.stop() }
        let other = try daemon.client()

        // mpd's answer for a path its database does not list (transcript 39).
        let refused = try daemon.mpc("add", "02-b.mp3", timeout: 5)
        try #require(refused.status == 1 && refused.stdout == [] && refused.stderr == "error adding 02-b.mp3: No such directory\n",
                     "\(refused)")
        #expect(try other.request("status", timeout: 2).last == "OK")

        // The whole library is its two songs; they play.
        expectSuccess(try daemon.mpc("add", "/", timeout: 5), stdout: [])
        expectSuccess(try daemon.mpc("playlist", timeout: 5), stdout: [Expect.songLines[0], Expect.songLines[2]])
        expectPlayingStatus(try daemon.mpc("play", timeout: 5), song: Expect.songLines[0], state: "playing",
                            position: 1, length: 2, total: Expect.media[0].seconds, elapsed: 0...1)
        expectPlayingStatus(try daemon.mpc("next", timeout: 5), song: Expect.songLines[2], state: "playing",
                            position: 2, length: 2, total: Expect.media[2].seconds, elapsed: 0...1)
        #expect(replyValue(try other.request("status", timeout: 2), "state") == "play")
        #expect(daemon.process.isRunning, "stderr: \(daemon.process.standardError)")
    }
}
