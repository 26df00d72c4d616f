import Dispatch
import Foundation
@testable import QueuePlayer
import Synchronization
import TestSupport
import Testing

/// While an item plays, a tick works out the time and calls the periodic observers on the
/// clock thread without entering the player's control queue ("no control-queue round
/// trip per tick"): the tick reads what the control queue published with the timer
/// (`TickShare`), and goes to the control queue only when the item's end or anything else
/// that changes the timeline is due.
@Suite struct TickAloneTests {
    /// The observer's times, in the order its block got them. Under `times`' mutex.
    final class Ticks: Sendable {
        let times = Mutex<[Double]>([])
        var count: Int { times.withLock { $0.count } }
    }

    /// With the control queue held by a block the player knows nothing of, the 10 ms observer
    /// keeps getting the time, and the time moves on: the ticks did not enter that queue (they
    /// did, one by one, before: the count then stood still for as long as the queue was held).
    /// The player's own work there takes the span back first, and the ticks wait for it.
    @Test func theObserverTicksOnWhileTheControlQueueIsBusy() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = try TestMedia.makeTone(seconds: 10, in: directory, name: "ten-seconds")
        let player = QueuePlayer(items: [PlayerItem(url: tone)], sink: NullAudioSink())
        defer { player.close() }
        let ticks = Ticks()
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100),
                                                   queue: DispatchQueue(label: "TickAloneTests.ticks")) { time in
            ticks.times.withLock { $0.append(time.seconds) }
        }
        defer { player.removeTimeObserver(token) }
        player.play()
        try #require(waitUntil(timeout: 10) { ticks.count >= 20 }, "the observer was called \(ticks.count) times")

        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        player.controlQueue.async {
            held.signal()
            _ = release.wait(timeout: .now() + 30)
        }
        held.wait()
        let before = ticks.times.withLock { ($0.count, $0.last ?? 0) }
        // 30 ticks take 0.3 s; the deadline leaves a loaded machine ten times that and more.
        let tickedOn = waitUntil(timeout: 5) { ticks.count >= before.0 + 30 }
        let during = ticks.times.withLock { ($0.count, $0.last ?? 0) }
        release.signal()
        #expect(tickedOn, "\(during.0 - before.0) calls while the control queue was held (30 wanted)")
        #expect(during.1 > before.1 + 0.2, "the time moved from \(before.1) to \(during.1) s while the queue was held")
    }
}
