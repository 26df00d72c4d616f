import Foundation
import QueuePlayer
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Where a FIFO output's audio is heard: what its reader has taken. The sink paces the stream
/// eight chunks ahead of the clock, and a reader such as snapserver takes what is written at
/// once; the position must be what the reader was given, so that a pause resumed there gives
/// the reader nothing twice. A real FIFO, read as fast as it fills by a thread of the test.
@Suite struct FIFOPositionTests {
    static let format = AudioFormat(sampleRate: 44_100, channelCount: 2)

    /// Reads the FIFO at `path` as fast as it fills, counting bytes, until the write end closes.
    final class EagerReader: Sendable {
        private let bytes = Atomic<Int>(0)
        private let done = DispatchSemaphore(value: 0)

        init(path: String) {
            let thread = Thread { [self] in
                let fd = open(path, O_RDONLY)
                defer { if fd >= 0 { close(fd) }; done.signal() }
                guard fd >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if count <= 0 { return }
                    bytes.add(count, ordering: .relaxed)
                }
            }
            thread.start()
        }

        var frames: Int { bytes.load(ordering: .relaxed) / FIFOPositionTests.format.bytesPerFrame }

        func waitForEnd() { _ = done.wait(timeout: .now() + 10) }
    }

    /// A player of a song into a FIFO of a scratch directory, read by an ``EagerReader``, on a
    /// virtual clock moved one second on, once the reader has some of it (a reader that opened
    /// after the first writes missed those: the tests count from a point it has).
    static func playing() throws -> (URL, EagerReader, VirtualClock, FIFOAudioSink, QueuePlayer) {
        let directory = try TestMedia.scratchDirectory()
        let path = directory.appendingPathComponent("audio.fifo").path
        try FIFOAudioSink.prepare(path: path)
        let reader = EagerReader(path: path)
        let clock = VirtualClock()
        let sink = FIFOAudioSink(path: path, format: Self.format, clock: clock)
        let item = PlayerItem(url: TestMedia.directory.appendingPathComponent("01-morning-sine.mp3"))
        let player = QueuePlayer(items: [item], sink: sink, decoderFactory: MPG123DecoderFactory(outputFormat: Self.format))
        player.play()
        #expect(waitUntil(timeout: 10) { player.timeControlStatus == .playing })
        clock.advance(bySeconds: 1)
        #expect(waitUntil(timeout: 10) { reader.frames > 0 && sink.framesDelivered > 0 })
        return (directory, reader, clock, sink, player)
    }

    @Test func aPausedFIFOOutputIsAtWhatItsReaderWasGiven() throws {
        let (directory, reader, clock, sink, player) = try Self.playing()
        defer { try? FileManager.default.removeItem(at: directory) }
        clock.advance(bySeconds: 2)
        player.pause()
        #expect(waitUntil(timeout: 10) { player.timeControlStatus == .paused })
        // The reader has taken everything written (nothing is left in the pipe).
        #expect(waitUntil(timeout: 10) { Int64(reader.frames) == sink.framesDelivered })
        let given = Double(sink.framesDelivered + sink.framesDropped) / Double(Self.format.sampleRate)
        let position = player.currentTime().seconds
        // Within one render chunk (1,024 frames, 23 ms) of what the reader was given; the pace
        // was eight chunks (186 ms) ahead of the clock.
        #expect(abs(position - given) <= 1024.0 / 44_100 + 1e-6,
                "paused at \(position) s; the reader was given \(given) s (\(sink.framesDropped) frames dropped before it came)")
        player.close()
        reader.waitForEnd()
    }

    /// While playing, `currentTime` is what the reader has been given, not the pace's clock,
    /// which runs eight chunks (186 ms) behind the writes: what a status or a WebSocket
    /// subscriber is told is what snapserver has.
    @Test func aPlayingFIFOOutputIsAtWhatItsReaderWasGiven() throws {
        let (directory, reader, clock, sink, player) = try Self.playing()
        defer { try? FileManager.default.removeItem(at: directory) }
        for _ in 0..<3 {
            clock.advance(bySeconds: 0.5)
            #expect(waitUntil(timeout: 10) { sink.isWaitingForTime && Int64(reader.frames) == sink.framesDelivered })
            // The position was measured at the last write, when the reader may not yet have
            // taken what came before it (a loaded machine delays the reader's thread). Two
            // chunks' time on, with the pipe emptied, the render thread writes a chunk and
            // measures again: what is pending then is at most that chunk.
            clock.advance(bySeconds: 2048.0 / 44_100)
            #expect(waitUntil(timeout: 10) { sink.isWaitingForTime && Int64(reader.frames) == sink.framesDelivered })
            let given = Double(sink.framesDelivered + sink.framesDropped) / Double(Self.format.sampleRate)
            let position = player.currentTime().seconds
            #expect(abs(position - given) <= 1024.0 / 44_100 + 1e-6,
                    "playing at \(position) s; the reader was given \(given) s")
        }
        // Closed while playing, the player would first let the pipe's pace play out on a clock
        // that moves only when told.
        player.pause()
        #expect(waitUntil(timeout: 10) { player.timeControlStatus == .paused })
        player.close()
        reader.waitForEnd()
    }
}
