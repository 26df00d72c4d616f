import Dispatch
import Foundation
@testable import QueuePlayer
import TestSupport
import Testing

/// Periodic and boundary time observers against a virtual clock.
@Suite struct TimeObserverTests {
    /// One 70 s item, so a 60 s run stays inside one item.
    static func longItem() throws -> (url: URL, directory: URL) {
        let directory = try TestMedia.scratchDirectory()
        return (try TestMedia.makeTone(seconds: 70, in: directory, name: "seventy-seconds"), directory)
    }

    @Test func aTenMillisecondObserverFiresSixThousandTimesInSixtySeconds() throws {
        let (url, directory) = try Self.longItem()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = VirtualClock()
        let player = QueuePlayer(items: [PlayerItem(url: url)], sink: NullAudioSink(clock: clock))
        let queue = DispatchQueue(label: "ticks")
        let times = Recorder<Double>()
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100), queue: queue) { time in
            times.append(time.seconds)
        }
        player.play()           // extra call: playback starts (at 0.00)
        clock.advance(bySeconds: 60)
        player.pause()          // no extra call: 60.00 was just delivered by its tick
        queue.sync {}

        let all = times.all
        // Documented extra calls: one when playback starts. Pausing exactly on a tick adds none.
        #expect(all.count == 6001, "got \(all.count) calls")
        #expect(all.first == 0)
        #expect(zip(all, all.dropFirst()).allSatisfy { $0 < $1 }, "times must strictly increase")
        let frame = 1.0 / 44_100
        let offGrid = all.filter { abs($0 * 100 - ($0 * 100).rounded()) / 100 > frame }
        #expect(offGrid.isEmpty, "times off the 10 ms grid: \(offGrid.prefix(5))")
        #expect(abs((all.last ?? 0) - 60) <= frame)

        // After removal returns, no call starts; removing twice is harmless.
        player.removeTimeObserver(token)
        player.removeTimeObserver(token)
        let countAfterRemoval = times.all.count
        player.play()
        clock.advance(bySeconds: 1)
        queue.sync {}
        #expect(times.all.count == countAfterRemoval)
    }

    /// A device's delay estimate can step (ALSA's pulse plugin's does), and the position then
    /// runs ahead of the timer set for the next tick. Rescheduling in that moment (here, another
    /// observer is added) must call the passed tick at once, not wait for the one after it.
    @Test func aTickThePositionPassedBeforeItsTimerIsCalledWhenTheScheduleChanges() throws {
        let url = try #require(TestMedia.stereo.first)
        let clock = VirtualClock()
        let sink = NullAudioSink(clock: clock)
        let player = QueuePlayer(items: [PlayerItem(url: url)], sink: sink)
        let queue = DispatchQueue(label: "ticks")
        let times = Recorder<Double>()
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100), queue: queue) {
            times.append($0.seconds)
        }
        player.play()
        clock.advance(bySeconds: 0.1)
        sink.reportedDelayBias = -66    // the sink now claims 1.5 ms less than it holds
        func hundredths(_ seconds: Double) -> Int { Int((seconds * 100 + 1e-6).rounded(.down)) }
        var other: TimeObserverToken?
        for _ in 0..<1000 where other == nil {
            clock.advance(byNanoseconds: 100_000)
            queue.sync {}
            if hundredths(player.currentTime().seconds) > hundredths(times.all.last ?? 0) {
                // Past a multiple of 10 ms whose call has not come: its timer is still pending.
                other = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 1), queue: queue) { _ in }
            }
        }
        try #require(other != nil, "the position never ran ahead of a tick's timer")
        clock.advance(bySeconds: 0.1)
        player.pause()
        queue.sync {}
        let ticks = times.all.map(hundredths)
        let missing = Set(ticks.first!...ticks.last!).subtracting(ticks).sorted()
        #expect(missing.isEmpty, "no call for \(missing.map { Double($0) / 100 }) s in \(times.all)")
        player.removeTimeObserver(token)
        player.removeTimeObserver(other!)
    }

    /// A time counts as a tick when it is within ``PeriodicTimeObserver/tolerance`` before it;
    /// the next tick after a call is the one beyond that. Were the two rules apart (the tolerance
    /// of the next-tick rule was once relative to the interval), a call just before a tick could
    /// leave that tick due at the call's own time: a wake-up that delivers nothing and asks to
    /// run again at once, for ever under a virtual clock.
    @Test(arguments: [MediaTime(value: 1, timescale: 60), MediaTime(value: 1, timescale: 100),
                      MediaTime(value: 1, timescale: 3), MediaTime(value: 7, timescale: 10)])
    func theTickAfterACallIsTheFirstBeyondTheTolerance(interval: MediaTime) {
        let delivery = TimeObserverDelivery(queue: DispatchQueue(label: "ticks"), clock: RealTimeClock.shared) { _ in }
        let observer = PeriodicTimeObserver(interval: interval, delivery: delivery)
        var failures: [String] = []
        for multiple in [1, 2, 59, 60, 61, 6_000] {
            let tick = Double(multiple) * interval.seconds
            // Calls from 0.3 µs before the tick to 0.3 µs after, leaving out the rounding edge at
            // exactly the tolerance: more than 0.1 µs early, the next tick is this one; closer, the next.
            for step in -30...30 where step != -10 {
                let call = tick + Double(step) * 1e-8
                let expected = step < -10 ? tick : tick + interval.seconds
                let next = observer.tick(after: call)
                if abs(next - expected) > 1e-9 { failures.append("call at \(call) s: next tick \(next) s, not \(expected) s") }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) cases, first \(failures.prefix(3))")
        delivery.cancel()
    }

    /// Moving on to another item (advanceToNextItem, removing the current item) starts the
    /// observer over on the new item's timeline: its ticks come from the new item's start,
    /// not once it has played as long as the previous one had.
    @Test func ticksGoOnFromTheStartOfTheNextItemAfterAdvancing() throws {
        let urls = TestMedia.stereo
        try #require(urls.count >= 3)
        let clock = VirtualClock()
        let items = urls.prefix(3).map { PlayerItem(url: $0) }
        let player = QueuePlayer(items: items, sink: NullAudioSink(clock: clock))
        let queue = DispatchQueue(label: "ticks")
        let times = Recorder<(item: PlayerItem?, seconds: Double)>()
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100), queue: queue) { [player] time in
            times.append((player.currentItem, time.seconds))
        }
        player.play()
        clock.advance(bySeconds: 1.5)
        player.advanceToNextItem()
        clock.advance(bySeconds: 0.5)
        player.remove(items[1])
        clock.advance(bySeconds: 0.5)
        player.pause()
        queue.sync {}
        for item in items.dropFirst() {
            let seen = times.all.filter { $0.item == item }.map(\.seconds)
            // Over 0.5 s of the item: a call every 10 ms from its start (the first when it becomes audible): 50 or 51.
            #expect(seen.count >= 50, "\(item.url.lastPathComponent): \(seen.count) calls, first \(seen.prefix(3))")
            #expect((seen.first ?? 1) < 0.005, "\(item.url.lastPathComponent): first call at \(seen.first ?? -1) s")
        }
        player.removeTimeObserver(token)
    }

    @Test func pauseAndSeekAddOneCallEachAndATokenOfAnotherPlayerIsIgnored() throws {
        let url = try #require(TestMedia.stereo.first)
        let clock = VirtualClock()
        let player = QueuePlayer(items: [PlayerItem(url: url)], sink: NullAudioSink(clock: clock))
        let other = QueuePlayer(sink: NullAudioSink(clock: clock))
        let queue = DispatchQueue(label: "ticks")
        let times = Recorder<Double>()
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 10), queue: queue) { times.append($0.seconds) }
        let foreign = other.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 10), queue: queue) { _ in }
        player.removeTimeObserver(foreign)   // not this player's: nothing happens
        player.play()
        clock.advance(bySeconds: 0.35)
        player.pause()
        // Let the pause call run: a call still waiting when the next one comes is coalesced into it.
        queue.sync {}
        player.seek(to: MediaTime(seconds: 2))
        queue.sync {}
        let all = times.all
        try #require(all.count == 6, "\(all)")  // start 0, ticks 0.1 0.2 0.3, pause 0.35, seek 2.0
        #expect(abs(all[4] - 0.35) < 1e-3)
        #expect(abs(all[5] - 2) < 1e-3)
        withExtendedLifetime(token) {}
        other.removeTimeObserver(foreign)
    }

    @Test func aBlockRunningDuringRemovalFinishesBeforeRemovalReturns() throws {
        let url = try #require(TestMedia.stereo.first)
        let clock = VirtualClock()
        let player = QueuePlayer(items: [PlayerItem(url: url)], sink: NullAudioSink(clock: clock))
        let queue = DispatchQueue(label: "slow")
        let inBlock = DispatchSemaphore(value: 0)
        let state = Recorder<String>()
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100), queue: queue) { _ in
            state.append("start")
            inBlock.signal()
            usleep(200_000)
            state.append("end")
        }
        player.play()
        inBlock.wait()
        player.removeTimeObserver(token)
        state.append("removed")
        clock.advance(bySeconds: 0.5)
        queue.sync {}
        #expect(state.all == ["start", "end", "removed"])
    }

    @Test func aBoundaryObserverFiresOncePerCrossedTime() throws {
        let url = try #require(TestMedia.stereo.first)
        let clock = VirtualClock()
        let player = QueuePlayer(items: [PlayerItem(url: url)], sink: NullAudioSink(clock: clock))
        let queue = DispatchQueue(label: "boundaries")
        let fired = Recorder<Int>()
        let token = player.addBoundaryTimeObserver(forTimes: [1, 2.5, 4].map { MediaTime(seconds: $0) }, queue: queue) {
            fired.append(1)
        }
        func calls(after seconds: Double) -> Int {
            clock.advance(bySeconds: seconds)
            queue.sync {}
            return fired.all.count
        }
        player.play()
        #expect(calls(after: 0.999) == 0)
        #expect(calls(after: 0.002) == 1)    // 1.001 s: crossed 1 s
        #expect(calls(after: 1.497) == 1)    // 2.498 s
        #expect(calls(after: 0.004) == 2)    // 2.502 s: crossed 2.5 s
        #expect(calls(after: 0.5) == 2)      // once per crossing, not per tick
        // A seek over 4 s does not cross it in playback.
        player.seek(to: MediaTime(seconds: 5))
        #expect(calls(after: 1) == 2)
        // Seeking back and playing over a time again crosses it again.
        player.seek(to: MediaTime(seconds: 3.9))
        #expect(calls(after: 0.2) == 3)
        withExtendedLifetime(token) {}
    }
}
