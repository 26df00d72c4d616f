import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The daemon feeding Snapcast end to end: queueplayerd → FIFO → the real snapserver → the
/// real snapclient, whose `file` player writes the samples it plays.
@Suite(.serialized) struct SnapcastTests {
    /// A queue mixing formats (a 22.05 kHz mono item between 44.1 kHz stereo ones) reaches the
    /// client decoded to the FIFO's one format, sample for sample and with no gap at the
    /// boundaries: each piece is where the one before ends.
    @Test func theQueueReachesASnapclientSampleExactWithNoGap() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Sweeps, so every window of a piece is found in one place only.
        let pieces = try [
            Self.sweep("a", seconds: 1.3, from: 200, to: 4000, rate: 44_100, channels: 2, in: directory),
            Self.sweep("b", seconds: 1.1, from: 3000, to: 300, rate: 22_050, channels: 1, in: directory),
            Self.sweep("c", seconds: 1.2, from: 500, to: 6000, rate: 44_100, channels: 2, in: directory),
        ]
        // Items before and after the pieces keep the stream steady around them: at a stream's
        // start snapserver may still be reopening the FIFO (it reopens it at each end of file)
        // and snapclient adjusts its buffer by a few samples while it syncs; at its end it
        // drops the part shorter than its 20 ms chunk. All that is Snapcast's own doing, not
        // a boundary's.
        let leadIn = try Self.sweep("lead", seconds: 2.5, from: 150, to: 250, rate: 44_100, channels: 2, in: directory)
        let trailer = try Self.sweep("d", seconds: 1.0, from: 800, to: 900, rate: 44_100, channels: 2, in: directory)
        let references = try pieces.map { try ReferenceDecoder.decode($0, rate: 44_100, channels: 2).pcm }
        let expected = references.reduce(Data(), +)

        let snapcast = try SnapcastPair(directory: directory)
        defer { snapcast.stop() }
        let daemon = try ChildProcess(([leadIn] + pieces + [trailer]).map(\.path) + [
            "--once", "--output", "fifo:\(snapcast.fifo)", "--socket", directory.appendingPathComponent("control.sock").path,
        ])
        defer { daemon.terminate() }

        // The client plays a second (snapserver's buffer) behind; the queue lasts 7.1 s.
        let deadline = ChildProcess.now() + 25
        var capture = Data()
        var start: Int?
        repeat {
            var none = pollfd()
            _ = poll(&none, 0, 200)
            capture = (try? Data(contentsOf: snapcast.capture)) ?? Data()
            start = start ?? PieceLocator.start(of: references[0], in: capture)
            if let start, capture.count >= start + expected.count + 44_100 * 4 / 10 { break }
        } while ChildProcess.now() < deadline
        let located = PieceLocator.boundaries(of: references, in: capture)
        let lengths = references.map { $0.count / 4 }
        guard let start else {
            Issue.record("the first piece is not in the client's \(capture.count) bytes; daemon: \(daemon.standardError); client: \(snapcast.client.lines.suffix(10).map(\.text))")
            return
        }
        let joins = [references[0].count, references[0].count + references[1].count]
        let trace = StreamTrace(expected: expected, boundaries: joins, in: capture, from: start)
        print("Snapcast: pieces of \(lengths) frames at bytes \(located.starts) of the client's \(capture.count) (located by their middles: boundaries \(located.boundaries) frames); Snapcast's own adjustments \(trace.adjustments) frames, \(trace.blocksMissing) of \(trace.blocks) blocks not found")
        #expect(capture.count >= start + expected.count, "the client wrote \(capture.count) bytes; the queue ends at \(start + expected.count)")
        // No gap at a boundary: the 1,024 frames either side of it are in the client's audio as one run.
        #expect(trace.boundariesExact == [true, true], "frames added or dropped at the boundaries (by their middles: \(located.boundaries)); adjustments \(trace.adjustments)")
        // Everything else byte for byte, but for Snapcast's own adjustments: snapclient keeps in
        // sync by adding or dropping a sample now and then, each spoiling the block it falls in.
        // Each must be smaller than anything the daemon could cause: it drops whole writes
        // (1,024 frames) when a pipe is full, and snapserver reads 20 ms (882 frames) of silence
        // when the pipe runs dry.
        #expect(trace.adjustments.allSatisfy { abs($0) < 441 }, "the stream was shifted by \(trace.adjustments) frames")
        #expect(trace.blocksMissing * 5 <= trace.blocks, "\(trace.blocksMissing) of \(trace.blocks) blocks of the queue's audio are not in the client's")
        if trace.adjustments.isEmpty {
            let played = capture.count >= start + expected.count ? capture[start..<(start + expected.count)] : Data()
            #expect(played == expected, "the client's audio differs from the decoded queue (\(lengths) frames) at byte \(Self.firstDifference(played, expected))")
        }
        // Snapcast passes the pieces through only if the whole of them went through the FIFO.
        #expect(daemon.wait(timeout: 15) == 0, "the daemon (--once) did not finish the queue: \(daemon.standardError)")
    }

    /// A sweep tone made with sox and encoded by lame (gapless tag), `rate` and `channels` as given.
    static func sweep(_ name: String, seconds: Double, from low: Int, to high: Int, rate: Int, channels: Int, in directory: URL) throws -> URL {
        let wav = directory.appendingPathComponent("\(name).wav")
        let mp3 = directory.appendingPathComponent("\(name).mp3")
        try TestMedia.run("/usr/bin/sox", ["-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", wav.path,
                                           "synth", "\(seconds)", "sine", "\(low)-\(high)", "vol", "0.5"])
        try TestMedia.run("/usr/bin/lame", ["--quiet", "-V", "4", wav.path, mp3.path])
        try FileManager.default.removeItem(at: wav)
        return mp3
    }

    static func firstDifference(_ a: Data, _ b: Data) -> Int {
        for (index, (x, y)) in zip(a, b).enumerated() where x != y { return index }
        return min(a.count, b.count)
    }

    /// The trace tells snapclient's own adjustments from gaps at a boundary: an adjustment of a
    /// few frames near a boundary (inside the 1,024-frame window) leaves it exact, a dropped
    /// write or added frames at the boundary itself do not.
    @Test func theTraceTellsSnapclientsAdjustmentsNearABoundaryFromAGapAtIt() {
        var generator = SplitMix64(seed: 0x5AA9)
        let expected = Data((0..<(40_000 * 4)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let boundary = 20_000 * 4
        func trace(_ capture: Data) -> [Bool] {
            StreamTrace(expected: expected, boundaries: [boundary], in: capture, from: 0).boundariesExact
        }
        func frames(_ range: Range<Int>) -> Data { expected[(range.lowerBound * 4)..<(range.upperBound * 4)] }
        #expect(trace(expected) == [true])
        // Five frames dropped 300 frames before the boundary, as snapclient drops them.
        #expect(trace(frames(0..<19_700) + frames(19_705..<40_000)) == [true])
        // Three frames added (repeated) 200 frames after it.
        #expect(trace(frames(0..<20_200) + frames(20_197..<40_000)) == [true])
        // A write of 1,024 frames dropped at the boundary; 882 frames of silence added at it.
        #expect(trace(frames(0..<20_000) + frames(21_024..<40_000)) == [false])
        #expect(trace(frames(0..<20_000) + Data(count: 882 * 4) + frames(20_000..<40_000)) == [false])
        // Even a single frame dropped at the boundary itself.
        #expect(trace(frames(0..<20_000) + frames(20_001..<40_000)) == [false])
    }
}
