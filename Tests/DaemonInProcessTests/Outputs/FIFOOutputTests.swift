import DaemonCore
import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--output fifo:PATH`: raw PCM into a named pipe at real-time pace, with or without a
/// reader, beside other outputs that can be switched while playing.
/// (The queue's format and its saving, and the formats refused: IntegrationTests' suite of the
/// same name.)
@Suite(.serialized) struct FIFOOutputTests {
    /// With no reader the daemon plays on in real time (dropping the audio), and a reader that
    /// comes gets real-time audio from then on; when it leaves (EPIPE) the daemon plays on.
    @Test func withNoReaderTimeGoesOnAndAReaderGetsRealTimeAudio() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("audio.fifo").path
        let media = TestMedia.all
        let daemon = try InProcessDaemon(directory: directory) {
            $0.files = [media[0].path, media[1].path]
            $0.outputs = [try #require(OutputChoice(argument: "fifo:\(fifo)"))]
        }
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
        print("FIFO, timeout 10 cat: \(bytes) bytes (\(Double(bytes) / Double(FIFOCapture.bytesPerSecond)) s of audio) while the reader ran \(lifetime) s")
        #expect(bytes % 4 == 0, "whole frames only: \(bytes)")
        #expect(bytes >= Int(0.95 * Double(10 * FIFOCapture.bytesPerSecond)), "\(bytes) bytes in 10 s (\(run))")
        #expect(Double(bytes) <= Double(FIFOCapture.bytesPerSecond) * (lifetime + 9 * FIFOCapture.tick), "\(bytes) bytes while the reader ran \(lifetime) s")

        // The reader left (EPIPE on the next write): the daemon plays on, in real time.
        let after = try ElapsedSample(client)
        let later = try ElapsedSample.first(client, after: after.received + 1)
        #expect(later.state == "play" && daemon.isRunning, "\(later)")
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
        let readerA = try FIFOCapture.reader(fifos[0], into: captures[0])
        let readerB = try FIFOCapture.reader(fifos[1], into: captures[1])
        defer { readerA.terminate(); readerB.terminate() }
        let daemon = try InProcessDaemon {
            $0.files = [item.path]
            $0.outputs = try fifos.map { try #require(OutputChoice(argument: "fifo:\($0)")) }
        }
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
        let readerA2 = try FIFOCapture.reader(fifos[0], into: captures[2])
        defer { readerA2.terminate() }
        let deadline = ChildProcess.now() + 5
        while FIFOCapture.size(captures[2]) == 0 && ChildProcess.now() < deadline {
            var none = pollfd()
            _ = poll(&none, 0, 5)
        }
        #expect(FIFOCapture.size(captures[2]) > 0, "the output switched back on gives its new reader audio")
        let on = try StreamOffset(client)
        #expect(try ElapsedSample(client).state == "play")
        print("toggleoutput: position moved \((off.value - before.value) * 1000) ms (off), \((on.value - before.value) * 1000) ms (on again); \(before)")
        for (label, offset) in [("off", off), ("on again", on)] {
            #expect(abs(offset.value - before.value) <= FIFOCapture.tick + offset.uncertainty + before.uncertainty,
                    "switching output 0 \(label) moved the position by \((offset.value - before.value) * 1000) ms (\(before), \(offset))")
        }

        // The daemon ends: every reader sees the end of its pipe.
        daemon.stop()
        _ = readerB.wait(timeout: 5)
        _ = readerA2.wait(timeout: 5)
        let b = try Data(contentsOf: captures[1])
        #expect(b.count >= FIFOCapture.bytesPerSecond, "output 1 got \(b.count) bytes")
        #expect(FIFOCapture.isContiguous(b, in: reference), "output 1's audio is one gapless run of the item's")
        for capture in [captures[0], captures[2]] {
            let a = try Data(contentsOf: capture)
            #expect(FIFOCapture.isContiguous(a, in: reference), "\(capture.lastPathComponent) (\(a.count) bytes) is one run of the item's audio")
        }
    }
}
