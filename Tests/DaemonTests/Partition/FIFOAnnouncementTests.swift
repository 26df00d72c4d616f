import Foundation
import QueuePlayer
import Testing
import TestSupport
@testable import DaemonCore
#if canImport(Glibc)
import Glibc
#endif

/// A region's announcement interrupts the song on a FIFO output (snapserver's): the song must
/// resume where its audio in the pipe ended. The FIFO sink paces the stream eight chunks
/// (186 ms) ahead of the clock and its reader takes what is written at once, so resuming at
/// the audible time gave the reader those 186 ms twice. A real FIFO, read as fast as it fills.
@Suite struct FIFOAnnouncementTests {
    static let format = AudioFormat(sampleRate: 44_100, channelCount: 2)

    /// Reads the FIFO at `path` as fast as it fills until the write end closes.
    final class EagerReader: Sendable {
        private let done = DispatchSemaphore(value: 0)

        init(path: String) {
            let thread = Thread { [done] in
                let fd = open(path, O_RDONLY)
                defer { if fd >= 0 { close(fd) }; done.signal() }
                guard fd >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
            }
            thread.start()
        }

        func waitForEnd() { _ = done.wait(timeout: .now() + 10) }
    }

    @Test func theSongResumesWhereItsAudioInThePipeEnded() async throws {
        let scratch = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let path = scratch.appendingPathComponent("audio.fifo").path
        try FIFOAudioSink.prepare(path: path)
        let reader = EagerReader(path: path)
        var made: FIFOAudioSink?
        let fixture = try PartitionFixture(sink: { clock in
            let fifo = FIFOAudioSink(path: path, format: Self.format, clock: clock)
            made = fifo
            return fifo
        }, decoders: MPG123DecoderFactory(outputFormat: Self.format))
        let fifo = try #require(made)
        let song = TestMedia.directory.appendingPathComponent("01-morning-sine.mp3")
        let announcement = try TestMedia.makeTone(seconds: 1, in: fixture.directory, name: "announcement")
        await fixture.partition.run { partition in
            partition.append([song])
            partition.startPlayback(at: 0)
        }
        #expect(fixture.waitFor(.playing))
        for _ in 0..<30 { fixture.clock.advance(bySeconds: 0.1) }
        // The clock stands still: the render thread waits with the pace full, and nothing more is written.
        fixture.clock.waitForQuiescence()
        let given = Double(fifo.framesDelivered + fifo.framesDropped) / Double(Self.format.sampleRate)
        let resume = await fixture.partition.run { partition in
            partition.announce(announcement, for: "a test region")
            return partition.songTime
        }
        // Within one render chunk (1,024 frames, 23 ms) of the end of what the pipe was given.
        #expect(abs(resume - given) <= 1024.0 / 44_100 + 1e-6,
                "the song resumes at \(resume) s; the pipe was given \(given) s of it")
        await fixture.close()
        reader.waitForEnd()
    }
}
