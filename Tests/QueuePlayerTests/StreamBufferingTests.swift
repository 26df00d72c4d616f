import Foundation
import QueuePlayer
import Synchronization
import Testing
import TestSupport

/// AVPlayer's buffering properties for a network item, under a virtual clock with the scripted
/// network double: waiting to evaluate the buffering rate at the start, playing once likely to
/// keep up, a stall when the bytes stop (notification, reason, time standing still), and the PCM
/// heard through it all still the file's, byte for byte.
@Suite(.serialized) struct StreamBufferingTests {
    static let file = TestMedia.directory.appendingPathComponent("01-morning-sine.mp3")

    final class Setup: Sendable {
        let clock = VirtualClock()
        let sink: CapturingSink
        let source: ScriptedStreamSource
        let player: QueuePlayer
        let item: PlayerItem
        let body: Data

        init(automaticallyWaits: Bool = true) throws {
            body = try Data(contentsOf: StreamBufferingTests.file)
            let url = URL(string: "http://radio.invalid/episode.mp3")!
            source = ScriptedStreamSource(url: url, body: body)
            sink = CapturingSink(wrapping: NullAudioSink(clock: clock))
            item = PlayerItem(url: url)
            player = QueuePlayer(items: [item], sink: sink, decoderFactory: ScriptedStreamFactory([source]))
            player.automaticallyWaitsToMinimizeStalling = automaticallyWaits
        }

        /// Advances virtual time in 10 ms steps until `condition` holds (at most `seconds` of it).
        func advance(upTo seconds: Double, until condition: () -> Bool) -> Bool {
            var elapsed = 0.0
            while !condition() {
                if elapsed >= seconds { return false }
                clock.advance(bySeconds: 0.01)
                elapsed += 0.01
            }
            return true
        }

        func close() {
            player.pause()
            player.close()
        }
    }

    @Test func waitsThenPlaysThenStallsAndResumesByteExact() throws {
        let setup = try Setup()
        let stalls = Recorder<Bool>()
        let observer = NotificationCenter.default.addObserver(forName: PlayerItem.playbackStalledNotification, object: setup.item, queue: nil) { _ in
            stalls.append(true)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let times = Recorder<Double>()
        let token = setup.player.addPeriodicTimeObserver(forInterval: MediaTime(seconds: 0.1), queue: DispatchQueue(label: "times")) { times.append($0.seconds) }
        let reasons = Recorder<QueuePlayer.WaitingReason?>()
        let watch = setup.player.observe(\.reasonForWaitingToPlay, options: [.new]) { _, change in reasons.append(change.newValue ?? nil) }
        setup.player.play()
        setup.clock.advance(bySeconds: 0.1)
        #expect(setup.player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
        #expect(setup.player.reasonForWaitingToPlay == .evaluatingBufferingRate)
        #expect(setup.item.isPlaybackBufferEmpty)
        #expect(!setup.item.isPlaybackLikelyToKeepUp)
        #expect(setup.item.status == .unknown)

        // A second of audio (the file is about 90 kbit/s): still waiting, not likely to keep up yet.
        setup.source.deliver(12_000)
        setup.clock.advance(bySeconds: 0.2)
        #expect(setup.player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
        #expect(!setup.item.isPlaybackBufferEmpty)
        // Three seconds more: plays.
        setup.source.deliver(40_000)
        #expect(setup.advance(upTo: 1) { setup.player.timeControlStatus == .playing })
        #expect(setup.item.status == .readyToPlay)
        #expect(setup.player.reasonForWaitingToPlay == nil)

        // No more bytes: once they are played out, a stall.
        #expect(setup.advance(upTo: 10) { setup.player.reasonForWaitingToPlay == .toMinimizeStalls })
        #expect(setup.player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
        #expect(stalls.all.count == 1)
        #expect(setup.item.isPlaybackBufferEmpty)
        let heardAtStall = setup.player.currentTime().seconds
        let ticksAtStall = times.all.count
        setup.clock.advance(bySeconds: 2)
        #expect(setup.player.currentTime().seconds == heardAtStall, "time stands still while waiting")
        #expect(times.all.dropFirst(ticksAtStall).allSatisfy { $0 <= heardAtStall + 0.001 }, "no observer time past the stall")

        // The rest arrives: plays on to the end, every byte of PCM the file's.
        setup.source.finish()
        #expect(setup.advance(upTo: 30) { setup.player.items().isEmpty })
        let expected = try TestMedia.decodedPCM(Self.file)
        #expect(setup.sink.captured == expected)
        #expect(reasons.all.contains(.evaluatingBufferingRate) && reasons.all.contains(.toMinimizeStalls))
        watch.invalidate()
        setup.player.removeTimeObserver(token)
        setup.close()
    }

    @Test func withoutWaitingToMinimizeStallsItPlaysAtTheFirstBytes() throws {
        let setup = try Setup(automaticallyWaits: false)
        setup.player.play()
        setup.source.deliver(8_000)
        #expect(setup.advance(upTo: 1) { setup.player.timeControlStatus == .playing })
        #expect(!setup.item.isPlaybackLikelyToKeepUp)
        setup.close()
    }

    /// `preferredForwardBufferDuration` bounds what a stream buffers ahead: at 2 s the transport
    /// can hand over no more than about 2 s of audio (the rest waits for room) and the item
    /// says its buffer is full; back at 0 (automatic) the whole buffer is open again and the
    /// rest of the file is taken at once.
    @Test func aPreferredForwardBufferDurationBoundsWhatIsBuffered() throws {
        let setup = try Setup()
        setup.item.preferredForwardBufferDuration = 2
        #expect(setup.item.preferredForwardBufferDuration == 2)
        setup.player.play()
        setup.source.deliver(52_000)
        #expect(setup.advance(upTo: 1) { setup.player.timeControlStatus == .playing })
        let buffer = setup.source.buffer
        // The decoder has learnt the byte rate from the frames; play until less than 2 s is ahead.
        #expect(setup.advance(upTo: 10) { buffer.bytesPerSecond > 0 && setup.item.bufferedDuration < 1.5 })
        let rate = buffer.bytesPerSecond
        let limit = max(16 * 1024, rate * 2)
        let rest = setup.body.dropFirst(setup.source.delivered)
        let taken = rest.withUnsafeBytes { buffer.write($0) }
        let buffered = buffer.bufferedBytes
        print("preferred 2 s at \(rate) B/s: \(taken) of \(rest.count) bytes taken, \(buffered) buffered (\(setup.item.bufferedDuration) s)")
        #expect(taken > 0 && taken < rest.count)
        #expect(buffered <= limit, "\(buffered) bytes buffered with a limit of \(limit)")
        #expect(buffered >= limit - rate / 10, "\(buffered) bytes buffered: the buffer should be filled to its limit of \(limit)")
        #expect(setup.item.isPlaybackBufferFull)

        setup.item.preferredForwardBufferDuration = 0
        #expect(!setup.item.isPlaybackBufferFull)
        let more = rest.dropFirst(taken).withUnsafeBytes { buffer.write($0) }
        #expect(more == rest.count - taken, "automatic: the rest (\(rest.count - taken) bytes) fits the 1 MiB buffer, \(more) taken")
        setup.close()
    }

    @Test func titlesAndNamesAreObservable() throws {
        let setup = try Setup()
        let titles = Recorder<String?>()
        let watch = setup.item.observe(\.streamTitle, options: [.new]) { _, change in titles.append(change.newValue ?? nil) }
        setup.player.play()
        setup.source.deliver(60_000)
        #expect(setup.advance(upTo: 1) { setup.player.timeControlStatus == .playing })
        #expect(setup.item.streamName == "Scripted")
        setup.source.announce(title: "Artist - Song")
        #expect(titles.all == ["Artist - Song"])
        #expect(setup.item.streamTitle == "Artist - Song")
        #expect(setup.item.bufferedDuration > 0)
        #expect(setup.item.loadedTimeRanges.count == 1)
        watch.invalidate()
        setup.close()
    }
}
