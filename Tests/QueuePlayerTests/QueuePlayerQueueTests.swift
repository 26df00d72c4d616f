import Dispatch
import Foundation
import QueuePlayer
import TestSupport
import Testing

/// The queue on a null sink with a virtual clock: exact counts, no waiting.
@Suite struct QueuePlayerQueueTests {
    @Test func aQueuePlaysExactlyTheSumOfItsItemsDecodedFrames() throws {
        let urls = Array(TestMedia.all.prefix(3))
        try #require(urls.count == 3, "Media/ must hold at least three items")
        let lengths = try urls.map(TestMedia.frameCount)
        let clock = VirtualClock()
        let sink = NullAudioSink(clock: clock)
        let items = urls.map(PlayerItem.init(url:))
        let player = QueuePlayer(items: items, sink: sink)
        let seen = Recorder<(item: PlayerItem?, played: Int64)>()
        let observation = player.observe(\.currentItem, options: [.initial, .new]) { _, change in
            seen.append((change.newValue ?? nil, sink.framesPlayed))
        }
        player.play()
        clock.advance(bySeconds: 120)

        #expect(sink.framesWritten == lengths.reduce(0, +))
        #expect(sink.framesPlayed == lengths.reduce(0, +))
        #expect(seen.all.map(\.item) == [items[0], items[1], items[2], nil])
        // Each change happens when the new item's first frame becomes audible.
        let boundaries = [0, lengths[0], lengths[0] + lengths[1], lengths.reduce(0, +)]
        for (observed, boundary) in zip(seen.all.map(\.played), boundaries) {
            #expect(abs(observed - boundary) <= 1, "currentItem changed at frame \(observed), the boundary is \(boundary)")
        }
        #expect(player.items().isEmpty)
        #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
        #expect(player.reasonForWaitingToPlay == .noItemToPlay)
        observation.invalidate()
    }

    @Test func oldAndPriorReportLikeKVO() throws {
        let urls = Array(TestMedia.stereo.prefix(2))
        try #require(urls.count == 2)
        let clock = VirtualClock()
        let items = urls.map(PlayerItem.init(url:))
        let player = QueuePlayer(items: items, sink: NullAudioSink(clock: clock))
        let changes = Recorder<(prior: Bool, old: PlayerItem??, new: PlayerItem??)>()
        let observation = player.observe(\.currentItem, options: [.old, .new, .prior]) { _, change in
            changes.append((change.isPrior, change.oldValue, change.newValue))
        }
        let onlyNew = Recorder<(prior: Bool, old: PlayerItem??, new: PlayerItem??)>()
        let second = player.observe(\.currentItem, options: [.new]) { _, change in
            onlyNew.append((change.isPrior, change.oldValue, change.newValue))
        }
        let initial = Recorder<PlayerItem??>()
        let third = player.observe(\.currentItem, options: [.initial]) { _, change in initial.append(change.newValue) }
        // `.initial` without `.new` calls at once, with no value, as KVO does.
        #expect(initial.all.count == 1)
        #expect(initial.all.first! == nil)

        player.advanceToNextItem()
        let all = changes.all
        try #require(all.count == 2)
        #expect(all[0].prior && all[0].old == .some(items[0]) && all[0].new == nil)
        #expect(!all[1].prior && all[1].old == .some(items[0]) && all[1].new == .some(items[1]))
        #expect(onlyNew.all.count == 1)
        #expect(onlyNew.all[0].old == nil && onlyNew.all[0].new == .some(items[1]))

        observation.invalidate()
        player.advanceToNextItem()
        #expect(changes.all.count == 2, "an invalidated observation is never called again")
        withExtendedLifetime((second, third)) {}
    }

    @Test func actionAtItemEndPauseStopsAtTheFirstBoundary() throws {
        let urls = Array(TestMedia.stereo.prefix(2))
        try #require(urls.count == 2)
        let first = try TestMedia.frameCount(urls[0])
        let clock = VirtualClock()
        let sink = NullAudioSink(clock: clock)
        let items = urls.map(PlayerItem.init(url:))
        let player = QueuePlayer(items: items, sink: sink)
        player.actionAtItemEnd = .pause
        let ended = Recorder<PlayerItem>()
        let token = NotificationCenter.default.addObserver(forName: PlayerItem.didPlayToEndTimeNotification, object: nil, queue: nil) { note in
            if let item = note.object as? PlayerItem { ended.append(item) }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        player.play()
        clock.advance(bySeconds: Double(first) / 44_100 + 5)

        #expect(sink.framesPlayed == first)
        #expect(player.currentItem == items[0])
        #expect(player.rate == 0)
        #expect(player.timeControlStatus == .paused)
        #expect(player.items() == items)
        #expect(ended.all.filter { items.contains($0) } == [items[0]])
        #expect(abs(player.currentTime().seconds - Double(first) / 44_100) < 1.0 / 44_100)
    }

    @Test func insertingIntoAnEmptyPlayingQueueStartsPlayback() throws {
        let url = try #require(TestMedia.stereo.first)
        let clock = VirtualClock()
        let sink = NullAudioSink(clock: clock)
        let player = QueuePlayer(sink: sink)
        player.play()
        #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
        #expect(player.reasonForWaitingToPlay == .noItemToPlay)
        let item = PlayerItem(url: url)
        player.insert(item, after: nil)
        #expect(player.currentItem == item)
        #expect(player.timeControlStatus == .playing)
        clock.advance(bySeconds: 1)
        #expect(abs(player.currentTime().seconds - 1) < 0.001)
        #expect(sink.framesPlayed == 44_100)
    }

    @Test func seekMovesTheAudiblePositionAndPausingFreezesIt() throws {
        let url = try #require(TestMedia.stereo.first)
        let clock = VirtualClock()
        let sink = NullAudioSink(clock: clock)
        let player = QueuePlayer(items: [PlayerItem(url: url)], sink: sink)
        player.play()
        clock.advance(bySeconds: 1)
        player.seek(to: MediaTime(seconds: 5))
        #expect(abs(player.currentTime().seconds - 5) < 0.001)
        clock.advance(bySeconds: 0.5)
        #expect(abs(player.currentTime().seconds - 5.5) < 0.001)
        player.pause()
        let paused = player.currentTime()
        clock.advance(bySeconds: 2)
        #expect(player.currentTime() == paused)
        player.play()
        clock.advance(bySeconds: 0.25)
        #expect(abs(player.currentTime().seconds - paused.seconds - 0.25) < 0.001)
    }

    @Test func releasingTheOutputWhilePausedClosesItAndPlayResumesWithoutLosingAFrame() throws {
        let url = try #require(TestMedia.stereo.first)
        let total = try TestMedia.frameCount(url)
        let clock = VirtualClock()
        let sink = NullAudioSink(clock: clock)
        let player = QueuePlayer(items: [PlayerItem(url: url)], sink: sink)
        player.play()
        clock.advance(bySeconds: 2)
        player.releaseOutput()
        clock.advance(bySeconds: 0.5)
        #expect(sink.isOpen, "releasing does nothing while playing")

        player.pause()
        let paused = player.currentTime()
        player.releaseOutput()
        clock.advance(bySeconds: 3)
        #expect(!sink.isOpen)
        #expect(player.currentTime() == paused)
        #expect(player.timeControlStatus == .paused)

        player.play()
        clock.advance(bySeconds: 0.5)
        #expect(sink.isOpen)
        #expect(abs(player.currentTime().seconds - paused.seconds - 0.5) < 0.001)
        clock.advance(bySeconds: 60)
        // What the device held when it closed was decoded again, not lost or played twice.
        #expect(sink.framesPlayed == total)
    }
}
