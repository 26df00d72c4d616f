import Dispatch
import Foundation
import QueuePlayer
import Synchronization
import TestSupport
import Testing

/// The item to follow is opened off the player's control queue (``LookAheadOpener``): opening
/// an MP3 scans it whole, which for an hour-long episode takes a fifth of a second or more, and
/// the time observers' ticks and the start of the item before it must not wait for that. Each
/// test holds one item's open (``GatedDecoderFactory``) and waits for conditions, not times.
@Suite struct LookAheadOpeningTests {
    /// With the real-time clock and a null sink: the second item's open is held until the 10 ms
    /// observer has ticked ten times since it began and the first item has been heard for a
    /// quarter of a second. When the open ran on the control queue, `play()` itself waited out
    /// the gate (5 s) and not one tick came while it was held.
    @Test func theItemBeforeOneBeingOpenedPlaysAndTicksMeanwhile() throws {
        let tones = try Tones(seconds: [3, 1])
        defer { tones.remove() }
        let (first, second) = (tones.urls[0], tones.urls[1])
        let factory = GatedDecoderFactory(gating: second, timeout: 5)
        let player = QueuePlayer(items: [PlayerItem(url: first), PlayerItem(url: second)], sink: NullAudioSink(),
                                 decoderFactory: factory)
        defer { player.close() }
        let calls = Mutex<[(at: Double, seconds: Double)]>([])
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100),
                                                   queue: DispatchQueue(label: "LookAheadOpeningTests.ticks")) { time in
            let now = ChildProcess.now()
            calls.withLock { $0.append((now, time.seconds)) }
        }
        defer { player.removeTimeObserver(token) }
        player.play()

        let ticked = waitUntil(timeout: 10) {
            guard let began = factory.began else { return false }
            return calls.withLock { calls in calls.count(where: { $0.at > began }) >= 10 && (calls.last?.seconds ?? 0) >= 0.25 }
        }
        factory.open()
        #expect(ticked, "no ten ticks with the first item heard while the second was being opened")
        let began = try #require(factory.began, "the second item was never opened")
        try #require(waitUntil(timeout: 10) { factory.ended != nil })
        let ended = try #require(factory.ended)
        let during = calls.withLock { $0.filter { $0.at > began && $0.at < ended } }
        #expect(during.count >= 10, "\(during.count) ticks in the \(ended - began) s the second item was being opened")

        // Once open it is handed over, and becomes current after the first item.
        try #require(waitUntil(timeout: 10) { player.items().last?.status == .readyToPlay })
        #expect(waitUntil(timeout: 10) { player.currentItem?.url == second }, "the second item never became current")
    }

    /// An open that lands for an item the queue no longer has next is not used, and its decoder
    /// (an open file) is let go at once, not kept until some later open.
    @Test func anOpenThatLandsForAnItemNoLongerWantedIsDropped() throws {
        let tones = try Tones(seconds: [3, 1])
        defer { tones.remove() }
        let (first, second) = (tones.urls[0], tones.urls[1])
        let factory = GatedDecoderFactory(gating: second, timeout: 10)
        let secondItem = PlayerItem(url: second)
        let player = QueuePlayer(items: [PlayerItem(url: first), secondItem], sink: NullAudioSink(), decoderFactory: factory)
        defer { player.close() }
        player.play()
        try #require(waitUntil(timeout: 10) { factory.began != nil }, "the second item was never opened")
        player.remove(secondItem)
        factory.open()
        #expect(waitUntil(timeout: 10) { factory.gatedDecoderIsReleased }, "the removed item's decoder is still held")
        #expect(secondItem.status == .unknown, "the removed item was marked \(secondItem.status)")
        #expect(!player.items().contains(secondItem))
    }

    /// The same with an item after it: that one is opened next and follows the first item.
    @Test func whenTheItemBeingOpenedIsRemovedTheOneAfterItFollows() throws {
        let tones = try Tones(seconds: [2, 1, 1])
        defer { tones.remove() }
        let (first, second, third) = (tones.urls[0], tones.urls[1], tones.urls[2])
        let factory = GatedDecoderFactory(gating: second, timeout: 10)
        let secondItem = PlayerItem(url: second)
        let thirdItem = PlayerItem(url: third)
        let player = QueuePlayer(items: [PlayerItem(url: first), secondItem, thirdItem], sink: NullAudioSink(),
                                 decoderFactory: factory)
        defer { player.close() }
        player.play()
        try #require(waitUntil(timeout: 10) { factory.began != nil }, "the second item was never opened")
        player.remove(secondItem)
        factory.open()
        #expect(waitUntil(timeout: 10) { thirdItem.status == .readyToPlay }, "the third item was not opened ahead")
        #expect(waitUntil(timeout: 10) { player.currentItem === thirdItem }, "the third item did not follow the first")
        #expect(secondItem.status == .unknown, "the removed item was marked \(secondItem.status)")
        #expect(factory.gatedDecoderIsReleased, "the removed item's decoder is still held")
    }

    /// Tones of different pitches, one per length, in a scratch directory of their own.
    struct Tones {
        let directory: URL
        let urls: [URL]

        init(seconds: [Double]) throws {
            let directory = try TestMedia.scratchDirectory()
            self.directory = directory
            urls = try seconds.enumerated().map { index, length in
                try TestMedia.makeTone(seconds: length, frequency: 440 + 220 * index, in: directory, name: "tone\(index)")
            }
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }
}
