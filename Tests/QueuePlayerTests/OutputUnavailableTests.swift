import Foundation
@testable import QueuePlayer
import TestSupport
import Testing

/// An output that cannot be opened leaves the player waiting, not playing: it says why,
/// keeps its position, announces the failure once, and retries with a back-off.
@Suite struct OutputUnavailableTests {
    @Test func aPlayerWhoseOutputCannotOpenWaitsAndSaysWhy() throws {
        let url = try #require(TestMedia.stereo.first)
        // alsa-lib knows no such PCM: every open fails at once.
        let sink = ALSAAudioSink(device: "queueplayer-no-such-device")
        let player = QueuePlayer(items: [PlayerItem(url: url)], sink: sink)
        defer { player.close() }
        let failures = Recorder<Void>()
        let observer = NotificationCenter.default.addObserver(forName: QueuePlayer.outputDidFailNotification, object: player, queue: nil) { _ in
            failures.append(())
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let statuses = Recorder<(QueuePlayer.TimeControlStatus, QueuePlayer.WaitingReason?)>()
        let observation = player.observe(\.timeControlStatus, options: [.new]) { player, _ in
            statuses.append((player.timeControlStatus, player.reasonForWaitingToPlay))
        }
        defer { observation.invalidate() }

        player.play()
        let deadline = ChildProcess.now() + 5
        while player.reasonForWaitingToPlay != .outputUnavailable && ChildProcess.now() < deadline { usleep(1_000) }
        #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
        #expect(player.reasonForWaitingToPlay == .outputUnavailable)
        #expect(player.rate == 1, "playback is still wanted")

        // Over a second of retries (100 ms doubling): the time stands, the failure was announced once.
        let watchUntil = ChildProcess.now() + 1.2
        var times: Set<Double> = []
        while ChildProcess.now() < watchUntil {
            times.insert(player.currentTime().seconds)
            usleep(20_000)
        }
        #expect(times == [0], "the position moved without an output: \(times.sorted())")
        #expect(failures.all.count == 1, "the failure is announced once per outage, not per retry")
        // `play()` sets `.playing` before the render thread has tried the device; once it has, never again.
        let sinceWaiting = statuses.all.drop { $0.1 != .outputUnavailable }
        #expect(!sinceWaiting.isEmpty && !sinceWaiting.contains { $0.0 == .playing }, "playing again without an output: \(statuses.all)")
        #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate)

        player.pause()
        #expect(player.timeControlStatus == .paused)
        #expect(player.reasonForWaitingToPlay == nil)
    }

    /// The render thread reports the output's state in the generation it is in; the player
    /// may have posted a load (a `next`) a moment before. That output failed, or came back,
    /// all the same: missing it would leave the player playing into nothing, or waiting for ever.
    @Test func theOutputsStateCountsFromAnyGeneration() throws {
        let url = try #require(TestMedia.stereo.first)
        let clock = VirtualClock()
        let sink = NullAudioSink(clock: clock)
        let player = QueuePlayer(items: [PlayerItem(url: url)], sink: sink)
        player.play()
        clock.advance(bySeconds: 0.1)
        let current = player.onControlQueue { player.generation }
        // The render thread now waits for the (virtual) clock and pushes nothing: the test can
        // be the ring's producer, with events of the generation before the player's latest load.
        func report(_ kind: RenderEvent.Kind) {
            player.events.push(RenderEvent(kind: kind, generation: current - 1, renderID: 0, streamFrame: 0))
            player.onControlQueue {}
            clock.waitForQuiescence()
        }
        report(.outputFailed)
        #expect(player.reasonForWaitingToPlay == .outputUnavailable)
        #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
        report(.outputRestored)
        #expect(player.reasonForWaitingToPlay == nil)
        #expect(player.timeControlStatus == .playing)
        player.pause()
        clock.advance(bySeconds: 0.1)
    }
}
