import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--output fifo:PATH`: raw PCM into a named pipe at real-time pace, with or without a
/// reader, beside other outputs that can be switched while playing.
@Suite(.serialized) struct FIFOOutputTests {
    /// One tick: a render chunk, 1,024 frames at 44.1 kHz (the FIFO sink writes, and tries to
    /// open the pipe again, at least this often).
    static let tick = 1024.0 / 44_100
    /// Bytes of one second of 44.1 kHz 16-bit stereo.
    static let bytesPerSecond = 44_100 * 4

    /// With no reader the daemon plays on in real time (dropping the audio), and a reader that
    /// comes gets real-time audio from then on; when it leaves (EPIPE) the daemon plays on.
    @Test func withNoReaderTimeGoesOnAndAReaderGetsRealTimeAudio() throws {
        let directory = try TestMedia.scratchDirectory()
        let fifo = directory.appendingPathComponent("audio.fifo").path
        let media = TestMedia.all
        let daemon = try ControlDaemon([media[0].path, media[1].path], outputs: ["fifo:\(fifo)"], directory: directory)
        defer { daemon.stop() }
        var info = stat()
        #expect(stat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the daemon creates the FIFO")

        try daemon.waitForElapsed(atLeast: 0.2)
        let client = try daemon.client()
        let first = try ElapsedSample(client)
        let last = try ElapsedSample.first(client, after: first.received + 10)
        #expect(last.song == first.song && last.state == "play", "\(first) \(last)")
        let rate = (last.elapsed - first.elapsed) / (last.time - first.time)
        print("FIFO, no reader: elapsed advanced \(last.elapsed - first.elapsed) s in \(last.time - first.time) s (rate \(rate))")
        #expect(abs(rate - 1) <= 0.02, "elapsed advanced \(last.elapsed - first.elapsed) s in \(last.time - first.time) s with no reader")

        // A reader for 10 s: audio at the stream's pace from within a tick of its opening.
        let started = ChildProcess.now()
        let run = try ToolRun.run("/bin/sh", ["-c", "timeout 10 cat '\(fifo)' | wc -c"], timeout: 30)
        let lifetime = ChildProcess.now() - started
        let bytes = run.stdout.first.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? -1
        // At most what the clock let through while it ran, plus the pacing buffer (8 ticks) that
        // may be ahead of it; at least 10 s less cat's start-up and a tick, on a loaded machine.
        print("FIFO, timeout 10 cat: \(bytes) bytes (\(Double(bytes) / Double(Self.bytesPerSecond)) s of audio) while the reader ran \(lifetime) s")
        #expect(bytes % 4 == 0, "whole frames only: \(bytes)")
        #expect(bytes >= Int(0.95 * Double(10 * Self.bytesPerSecond)), "\(bytes) bytes in 10 s (\(run))")
        #expect(Double(bytes) <= Double(Self.bytesPerSecond) * (lifetime + 9 * Self.tick), "\(bytes) bytes while the reader ran \(lifetime) s")

        // The reader left (EPIPE on the next write): the daemon plays on, in real time.
        let after = try ElapsedSample(client)
        let later = try ElapsedSample.first(client, after: after.received + 1)
        #expect(later.state == "play" && daemon.process.isRunning, "\(later)")
        if later.song == after.song {
            #expect(abs((later.elapsed - after.elapsed) / (later.time - after.time) - 1) <= 0.1, "\(after) \(later)")
        }
    }

    /// Two FIFOs: switching the first (which paces) off and on again mid-item keeps the position
    /// within a tick, the second gets the item without a gap throughout, and the first gets
    /// audio again once it is back.
    @Test func toggleOutputKeepsThePositionAndTheOtherOutputPlaysOn() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifos = ["a.fifo", "b.fifo"].map { directory.appendingPathComponent($0).path }
        for fifo in fifos { #expect(mkfifo(fifo, 0o600) == 0) }
        let captures = ["a.raw", "b.raw", "a2.raw"].map { directory.appendingPathComponent($0) }
        let item = TestMedia.all[0]
        let reference = try ReferenceDecoder.decode(item).pcm
        // Readers first: `cat` waits in open until the daemon opens the pipe.
        let readerA = try Self.reader(fifos[0], into: captures[0])
        let readerB = try Self.reader(fifos[1], into: captures[1])
        defer { readerA.terminate(); readerB.terminate() }
        let daemon = try ControlDaemon([item.path], outputs: fifos.map { "fifo:\($0)" })
        defer { daemon.stop() }
        try daemon.waitForElapsed(atLeast: 1)
        let client = try daemon.client()
        #expect(try client.request("outputs") == [
            "outputid: 0", "outputname: FIFO (\(fifos[0]))", "plugin: fifo", "outputenabled: 1",
            "outputid: 1", "outputname: FIFO (\(fifos[1]))", "plugin: fifo", "outputenabled: 1", "OK",
        ])

        let before = try StreamOffset(client)
        #expect(try client.request("toggleoutput 0") == ["OK"])
        #expect(replyPairs(try client.request("outputs")).filter { $0.key == "outputenabled" }.map(\.value) == ["0", "1"])
        #expect(readerA.wait(timeout: 5) != nil, "the disabled output closed its pipe: its reader saw the end")
        let off = try StreamOffset(client)
        #expect(try client.request("toggleoutput 0") == ["OK"])
        let readerA2 = try Self.reader(fifos[0], into: captures[2])
        defer { readerA2.terminate() }
        let deadline = ChildProcess.now() + 5
        while Self.size(captures[2]) == 0 && ChildProcess.now() < deadline {
            var none = pollfd()
            _ = poll(&none, 0, 5)
        }
        #expect(Self.size(captures[2]) > 0, "the output switched back on gives its new reader audio")
        let on = try StreamOffset(client)
        #expect(try ElapsedSample(client).state == "play")
        print("toggleoutput: position moved \((off.value - before.value) * 1000) ms (off), \((on.value - before.value) * 1000) ms (on again); \(before)")
        for (label, offset) in [("off", off), ("on again", on)] {
            #expect(abs(offset.value - before.value) <= Self.tick + offset.uncertainty + before.uncertainty,
                    "switching output 0 \(label) moved the position by \((offset.value - before.value) * 1000) ms (\(before), \(offset))")
        }

        // The daemon ends: every reader sees the end of its pipe.
        daemon.stop()
        _ = readerB.wait(timeout: 5)
        _ = readerA2.wait(timeout: 5)
        let b = try Data(contentsOf: captures[1])
        #expect(b.count >= Self.bytesPerSecond, "output 1 got \(b.count) bytes")
        #expect(Self.isContiguous(b, in: reference), "output 1's audio is one gapless run of the item's")
        for capture in [captures[0], captures[2]] {
            let a = try Data(contentsOf: capture)
            #expect(Self.isContiguous(a, in: reference), "\(capture.lastPathComponent) (\(a.count) bytes) is one run of the item's audio")
        }
    }

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
        let reader = try Self.reader(fifo, into: capture)
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

    static func reader(_ fifo: String, into file: URL) throws -> ChildProcess {
        try ChildProcess(program: "/bin/sh", ["-c", "exec cat '\(fifo)' > '\(file.path)'"])
    }

    static func size(_ url: URL) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
    }

    /// True if `capture` is a frame-aligned run of `reference`, byte for byte.
    static func isContiguous(_ capture: Data, in reference: Data) -> Bool {
        guard capture.count >= 4096, let start = PieceLocator.start(of: capture, in: reference) else { return false }
        return start + capture.count <= reference.count && reference[start..<(start + capture.count)] == capture
    }
}

/// One `status`: the song, state and elapsed time, and when it was asked and answered.
struct ElapsedSample: CustomStringConvertible {
    let song: String?
    let state: String?
    let elapsed: Double
    let sent: Double
    let received: Double
    /// The moment `elapsed` was taken, within half a round trip.
    var time: Double { (sent + received) / 2 }

    init(_ client: UnixSocketClient) throws {
        sent = ChildProcess.now()
        let reply = try client.request("status")
        received = ChildProcess.now()
        song = replyValue(reply, "song")
        state = replyValue(reply, "state")
        elapsed = replyValue(reply, "elapsed").flatMap(Double.init) ?? -1
    }

    /// The first sample asked for after `time` (monotonic seconds), polling every 50 ms.
    static func first(_ client: UnixSocketClient, after time: Double) throws -> ElapsedSample {
        var sample = try ElapsedSample(client)
        while sample.sent < time {
            var none = pollfd()
            _ = poll(&none, 0, 50)
            sample = try ElapsedSample(client)
        }
        return sample
    }

    var description: String { "song \(song ?? "-") \(state ?? "-") elapsed \(elapsed) at \(time)" }
}

/// The stream's offset, `elapsed` minus the monotonic time, from the `status` replies with the
/// shortest round trips among several: constant while playback runs at the clock's pace.
struct StreamOffset: CustomStringConvertible {
    let value: Double
    /// Half the longest round trip of the samples used, plus `elapsed`'s millisecond rounding.
    let uncertainty: Double

    init(_ client: UnixSocketClient, samples: Int = 12) throws {
        var all: [ElapsedSample] = []
        for _ in 0..<samples {
            all.append(try ElapsedSample(client))
            var none = pollfd()
            _ = poll(&none, 0, 10)
        }
        let best = all.sorted { $0.received - $0.sent < $1.received - $1.sent }.prefix(3)
        value = best.map { $0.elapsed - $0.time }.reduce(0, +) / Double(best.count)
        uncertainty = (best.map { $0.received - $0.sent }.max() ?? 0) / 2 + 0.0005
    }

    var description: String { String(format: "offset %.4f s ± %.4f", value, uncertainty) }
}
