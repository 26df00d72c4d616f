import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--output fifo:PATH`: raw PCM into a named pipe at real-time pace, with or without a
/// reader, beside other outputs that can be switched while playing.
/// (Without a reader, and switched while playing: DaemonInProcessTests' suite of the same name.)
@Suite(.serialized) struct FIFOOutputTests {
    /// A queue mixing formats goes into the FIFO decoded to its one format, sample for sample,
    /// with nothing added or dropped at the boundaries (a reader that keeps up gets every frame).
    @Test func theQueueGoesIntoTheFIFOInItsFormatWithNoGap() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let items = try [
            SnapcastTests.sweep("a", seconds: 0.8, from: 200, to: 4000, rate: 44_100, channels: 2, in: directory),
            SnapcastTests.sweep("b", seconds: 0.7, from: 3000, to: 300, rate: 22_050, channels: 1, in: directory),
            SnapcastTests.sweep("c", seconds: 0.6, from: 500, to: 6000, rate: 48_000, channels: 2, in: directory),
        ]
        let expected = try items.map { try ReferenceDecoder.decode($0, rate: 44_100, channels: 2).pcm }.reduce(Data(), +)
        let fifo = directory.appendingPathComponent("audio.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let capture = directory.appendingPathComponent("capture.raw")
        let reader = try FIFOCapture.reader(fifo, into: capture)
        defer { reader.terminate() }
        let daemon = try ChildProcess(items.map(\.path) + ["--once", "--output", "fifo:\(fifo)", "--socket", directory.appendingPathComponent("control.sock").path])
        defer { daemon.terminate() }
        #expect(daemon.wait(timeout: 30) == 0, "\(daemon.standardError)")
        // The daemon's end closes the pipe: the reader has everything once it exits.
        #expect(reader.wait(timeout: 10) == 0)
        let received = try Data(contentsOf: capture)
        print("FIFO, a queue of 44.1 kHz stereo, 22.05 kHz mono and 48 kHz stereo: \(received.count) bytes read, \(expected.count) expected")
        #expect(received == expected, "the FIFO's \(received.count) bytes differ from the decoded queue's \(expected.count) at byte \(SnapcastTests.firstDifference(received, expected))")
    }

    /// The outputs' switches are saved with the state and restored at the next start.
    @Test func outputSwitchesAreSavedAndRestored() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("audio.fifo").path
        let socket = directory.appendingPathComponent("control.sock").path
        let arguments = ["--music-directory", TestMedia.directory.path, "--output", "null", "--output", "fifo:\(fifo)", "--socket", socket]
        let environment = ["XDG_STATE_HOME": directory.appendingPathComponent("state").path]
        for run in 0..<2 {
            let daemon = try ChildProcess(arguments, environment: environment)
            defer { daemon.terminate() }
            #expect(UnixSocketClient.waitUntilAccepting(socket, timeout: 5), "\(daemon.standardError)")
            let client = try UnixSocketClient(path: socket)
            _ = try client.readLine()
            if run == 0 {
                #expect(try client.request("disableoutput 1") == ["OK"])
                #expect(try client.request("disableoutput 2") == ["ACK [50@0] {disableoutput} No such audio output"])
            }
            #expect(replyPairs(try client.request("outputs")).filter { $0.key == "outputenabled" }.map(\.value) == ["1", "0"], "run \(run)")
            daemon.send(SIGTERM)
            #expect(daemon.wait(timeout: 10) == 0)
        }
    }

    /// A format the FIFO cannot have is refused at start with a clear message (status 64).
    @Test(arguments: [
        ("fifo:/tmp/x?format=44100:24:2", "16-bit"),
        ("fifo:/tmp/x?format=44000:16:2", "MPEG rate"),
        ("fifo:/tmp/x?format=44100:16:3", "channels"),
    ])
    func impossibleFormatsAreRefused(output: String, reason: String) throws {
        let daemon = try ChildProcess(["--output", output, "--no-state", "--socket", "/nonexistent/control.sock"])
        #expect(daemon.wait(timeout: 10) == 64)
        #expect(daemon.standardError.contains(reason), "\(daemon.standardError)")
    }
}
