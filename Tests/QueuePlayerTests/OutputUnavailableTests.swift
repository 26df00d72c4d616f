import Foundation
import QueuePlayer
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
}
