import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A FIFO named like a song (`x.mp3`) used to hang the daemon: `open(2)` of a FIFO waits
/// for a writer, on the controller's queue (`add`, queueing at start-up), so nothing played,
/// `status` got no answer and SIGTERM was not acted on. Only regular files are songs now;
/// anything else is refused without being opened in a way that blocks. (A FIFO in the media
/// directory, and mpc adding one: IntegrationTests' suite of the same name.)
@Suite(.serialized) struct ControlSocketFIFOTests {
    /// A FIFO given as a file argument is queued as asked, and refused when its turn comes
    /// with a message that says why; the items around it play.
    @Test func aFIFOGivenAsAFileIsRefusedWhenItsTurnComes() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try TestMedia.makeTone(seconds: 0.5, in: directory, name: "first")
        let last = try TestMedia.makeTone(seconds: 0.5, frequency: 880, in: directory, name: "last")
        let fifo = directory.appendingPathComponent("fifo.mp3").path
        try #require(mkfifo(fifo, 0o644) == 0)

        let daemon = try InProcessDaemon { $0.files = [first.path, fifo, last.path] }
        defer { daemon.stop() }
        let client = try daemon.client()
        #expect(try client.request("status", timeout: 2).last == "OK")
        let playedLast = daemon.waitForLine(timeout: 10) { $0 == "Now playing: last.mp3" }
        #expect(playedLast != nil, "lines: \(daemon.lines.map(\.text)); stderr: \(daemon.standardError)")
        #expect(daemon.lines.contains { $0.text == "Now playing: first.mp3" })
        let stderr = daemon.standardError
        #expect(stderr.contains("fifo.mp3") && stderr.contains("not a regular file"), "stderr: \(stderr)")
        #expect(try client.request("status", timeout: 2).last == "OK")
    }
}
