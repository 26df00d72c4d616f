import Foundation
import HTTPStreaming
import QueuePlayer
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Memory stays bounded whatever a server sends: an endless body at loopback speed, with or
/// without ICY metadata blocks of the largest size (4,080 bytes, each with a new title), played
/// under a virtual clock as fast as the decoder goes, so that many times the buffer passes
/// through it; the process's resident set grows by less than the buffer and a little more, where
/// anything that kept what passed (the body, the blocks, the titles) would grow by all of it.
@Suite(.serialized) struct BoundedMemoryTests {
    static let interval = 16_000

    /// An endless body of `LiveStreamTests.audio`, written in 64 KiB pieces as fast as the
    /// client reads; with `icy`, a metadata block of 255 × 16 bytes after every ``interval``
    /// audio bytes, its title new each time. `sent` counts the body's bytes.
    static func flood(icy: Bool, sent: UncheckedBox) throws -> ScriptedHTTPServer {
        try ScriptedHTTPServer { _, connection in
            var headers = [("Content-Type", "audio/mpeg")]
            if icy { headers += [("icy-name", "Flood"), ("icy-metaint", "\(interval)")] }
            connection.writeHead("200 OK", headers)
            let audio = LiveStreamTests.audio
            var position = 0
            var block = 0
            while connection.isOpen {
                var piece = Data()
                let audioBytes = icy ? interval : 64 << 10
                while piece.count < audioBytes {
                    let take = min(audioBytes - piece.count, audio.count - position)
                    piece += audio[position..<(position + take)]
                    position = (position + take) % audio.count
                }
                if icy {
                    let title = Array("StreamTitle='Title \(block) ".utf8)
                    var text = title + [UInt8](repeating: 0x41, count: 4080 - 2 - title.count) + Array("';".utf8)
                    text = Array(text.prefix(4080))
                    piece += Data([255]) + Data(text)
                    block += 1
                }
                guard connection.write(piece) else { return }
                sent.value.add(piece.count, ordering: .relaxed)
            }
        }
    }

    @Test(arguments: [false, true])
    func anEndlessFastBodyKeepsMemoryBounded(icy: Bool) async throws {
        let sent = UncheckedBox(Atomic<Int>(0))
        let server = try Self.flood(icy: icy, sent: sent)
        defer { server.stop() }
        let configuration = StreamPlayback.quick
        let clock = VirtualClock()
        let factory = HTTPStreamingDecoderFactory(configuration: configuration)
        let item = PlayerItem(url: server.url("flood"))
        let player = QueuePlayer(items: [item], sink: NullAudioSink(clock: clock, bufferDuration: 1), decoderFactory: factory)
        player.play()
        let capacity = configuration.bufferCapacity
        /// Plays (the clock in steps of half a second) until `bytes` have been sent.
        func play(until bytes: Int) -> Bool {
            let deadline = ChildProcess.now() + 120
            while sent.value.load(ordering: .relaxed) < bytes {
                if ChildProcess.now() > deadline || item.status == .failed { return false }
                clock.advance(bySeconds: 0.5)
                usleep(2_000)
            }
            return true
        }
        // Warm: the buffer has filled and been drained a few times over.
        try #require(play(until: 4 * capacity), "\(sent.value.load(ordering: .relaxed)) bytes; \(String(describing: item.error))")
        let pid = getpid()
        let before = try #require(ProcessStatistics.residentBytes(pid))
        var peak = before
        let start = sent.value.load(ordering: .relaxed)
        for step in 1...16 {
            try #require(play(until: start + step * capacity), "\(sent.value.load(ordering: .relaxed)) bytes; \(String(describing: item.error))")
            peak = max(peak, try #require(ProcessStatistics.residentBytes(pid)))
        }
        let passed = sent.value.load(ordering: .relaxed) - start
        print("endless body\(icy ? " with 4,080-byte ICY blocks" : ""): \(passed >> 20) MiB passed after warming; resident \(before >> 10) kB, peak \(peak >> 10) kB (+\((peak - before) >> 10) kB)")
        #expect(item.status == .readyToPlay, "\(String(describing: item.error))")
        if icy { #expect(item.streamTitle?.hasPrefix("Title ") == true) }
        #expect(peak - before < 2 * capacity, "resident grew by \(peak - before) bytes while \(passed) passed")
        player.pause()
        player.close()
        try await factory.shutdown()
    }
}
