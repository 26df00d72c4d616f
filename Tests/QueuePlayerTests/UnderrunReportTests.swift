import Foundation
import QueuePlayer
import TestSupport
import Testing

/// Underruns a device reports are passed on, counted, once each, while playback goes on:
/// the part of the underrun path that does not depend on when a sound server tells its
/// client (ALSA's pulse plugin reports a starved stream seconds late, or not at all).
@Suite struct UnderrunReportTests {
    @Test func eachUnderrunTheSinkReportsIsPostedWithTheRunningCount() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = try TestMedia.makeTone(seconds: 3, in: directory, name: "three-seconds")
        let sink = MeasuringSink(wrapping: NullAudioSink())
        let player = QueuePlayer(items: [PlayerItem(url: tone)], sink: sink)
        let counts = Recorder<Int>()
        let observer = NotificationCenter.default.addObserver(
            forName: QueuePlayer.outputDidRecoverFromUnderrunsNotification, object: player, queue: nil
        ) { note in
            if let count = note.userInfo?[QueuePlayer.underrunCountKey] as? Int { counts.append(count) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        player.play()
        func waitFor(_ condition: () -> Bool) -> Bool {
            let deadline = ChildProcess.now() + 5
            while !condition() && ChildProcess.now() < deadline { usleep(5_000) }
            return condition()
        }
        try #require(waitFor { player.currentTime().seconds > 0.1 }, "playback did not start")
        sink.simulateUnderrun()
        #expect(waitFor { counts.all == [1] }, "posted: \(counts.all)")
        sink.simulateUnderrun()
        sink.simulateUnderrun()
        #expect(waitFor { counts.all.last == 3 }, "posted: \(counts.all)")
        #expect(counts.all == [1, 3] || counts.all == [1, 2, 3], "each count once, never back: \(counts.all)")
        #expect(player.outputUnderruns == 3)
        #expect(player.timeControlStatus == .playing)
        player.close()
    }
}
