import Dispatch
import Foundation
import QueuePlayer
import Synchronization
import TestSupport
import Testing

/// The item to follow is opened off the player's control queue (``LookAheadOpener``): opening
/// an MP3 scans it whole, which for an hour-long episode takes a fifth of a second or more, and
/// the time observers' ticks and the start of the item before it must not wait for that.
@Suite struct LookAheadOpeningTests {
    /// With the real-time clock and a null sink: the second item's open is held (the gate) until
    /// the first item has been heard for half a second, and the 10 ms observer must tick through
    /// that whole time with the time running on. When the open was on the control queue, the
    /// player did not even start the first item until the gate's time ran out, and no tick came.
    @Test func theItemBeforeOneBeingOpenedPlaysAndTicksMeanwhile() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try TestMedia.makeTone(seconds: 4, in: directory, name: "first")
        let second = try TestMedia.makeTone(seconds: 1, frequency: 880, in: directory, name: "second")
        let factory = GatedDecoderFactory(gating: second, timeout: 5)
        let player = QueuePlayer(items: [PlayerItem(url: first), PlayerItem(url: second)], sink: NullAudioSink(),
                                 decoderFactory: factory)
        defer { player.close() }
        let calls = Mutex<[(at: Double, seconds: Double)]>([])
        let queue = DispatchQueue(label: "LookAheadOpeningTests.ticks")
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100), queue: queue) { time in
            let now = ChildProcess.now()
            calls.withLock { $0.append((now, time.seconds)) }
        }
        defer { player.removeTimeObserver(token) }
        player.play()

        // Held until the first item has been heard for half a second (or the gate's 5 s pass).
        let heard = waitUntil(timeout: 4) { calls.withLock { $0.last?.seconds ?? 0 } >= 0.5 }
        factory.open()
        #expect(heard, "the first item was not heard for 0.5 s while the second was being opened")
        let began = try #require(factory.began, "the second item was never opened")
        try #require(waitUntil(timeout: 5) { factory.ended != nil })
        let ended = try #require(factory.ended)

        let during = calls.withLock { $0.filter { $0.at > began && $0.at < ended } }
        #expect(during.count >= 30, "\(during.count) ticks in the \(ended - began) s the second item was being opened")
        let gaps = zip(during, during.dropFirst()).map { $1.at - $0.at }
        #expect((gaps.max() ?? .infinity) < 0.2, "the ticks stopped for \(gaps.max() ?? .infinity) s while the second item was being opened")

        // Once open, it follows the first item gaplessly: it is handed over and becomes current at the boundary.
        try #require(waitUntil(timeout: 5) { player.items().last?.status == .readyToPlay })
        #expect(waitUntil(timeout: 8) { player.currentItem?.url == second }, "the second item never became current")
    }
}
