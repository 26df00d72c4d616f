import Foundation
import QueuePlayer
import TestSupport
import Testing

/// Bad items fail, say why, and never stop the queue.
@Suite struct FailureTests {
    @Test func badItemsFailWithTheirCauseAndTheGoodOnesPlay() throws {
        let good = TestMedia.stereo
        try #require(good.count >= 3)
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fileManager = FileManager.default

        let missing = directory.appendingPathComponent("missing.mp3")
        let empty = directory.appendingPathComponent("empty.mp3")
        #expect(fileManager.createFile(atPath: empty.path, contents: Data()))
        let truncated = directory.appendingPathComponent("truncated.mp3")
        let whole = try Data(contentsOf: good[0])
        try whole.prefix(whole.count / 2).write(to: truncated)
        let noise = directory.appendingPathComponent("noise.mp3")
        var generator = SystemRandomNumberGenerator()
        try Data((0..<200_000).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: noise)
        let wave = directory.appendingPathComponent("wave.mp3")
        try TestMedia.run("/usr/bin/sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", "-t", "wav", wave.path, "synth", "2", "sine", "440"])

        let urls = [good[0], missing, empty, good[1], truncated, noise, wave, good[2]]
        let items = urls.map(PlayerItem.init(url:))
        let clock = VirtualClock()
        let sink = NullAudioSink(clock: clock)
        let failures = Recorder<(item: PlayerItem, error: DecoderError?)>()
        let observer = NotificationCenter.default.addObserver(forName: PlayerItem.failedToPlayToEndTimeNotification, object: nil, queue: nil) { note in
            if let item = note.object as? PlayerItem, items.contains(item) {
                failures.append((item, note.userInfo?[PlayerItem.failedToPlayToEndTimeErrorKey] as? DecoderError))
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let player = QueuePlayer(items: items, sink: sink)
        let seen = Recorder<PlayerItem?>()
        let observation = player.observe(\.currentItem, options: [.initial, .new]) { _, change in seen.append(change.newValue ?? nil) }
        player.play()
        clock.advance(bySeconds: 120)
        observation.invalidate()

        let goodLengths = try [good[0], good[1], good[2]].map(TestMedia.frameCount)
        #expect(sink.framesPlayed == goodLengths.reduce(0, +), "exactly the good items play")
        #expect(seen.all.compactMap { $0 } == [items[0], items[3], items[7]])
        #expect(player.items().isEmpty)

        let bad = [1, 2, 4, 5, 6].map { items[$0] }
        for item in bad {
            #expect(item.status == .failed, "\(item.displayName) should have failed")
            #expect(item.error?.description.contains(item.url.path) == true, "the error names the file: \(String(describing: item.error))")
        }
        for item in [0, 3, 7].map({ items[$0] }) { #expect(item.status == .readyToPlay) }
        #expect(items[1].error?.reason == .fileNotFound)
        #expect(items[2].error?.reason == .empty)
        if case .truncated = items[4].error?.reason {} else { Issue.record("truncated: \(String(describing: items[4].error))") }
        if case .notMPEGAudio = items[5].error?.reason {} else if case .corrupt = items[5].error?.reason {} else {
            Issue.record("random bytes: \(String(describing: items[5].error))")
        }
        if case .notMPEGAudio(let why) = items[6].error?.reason { #expect(why.contains("RIFF")) } else {
            Issue.record("WAV: \(String(describing: items[6].error))")
        }
        #expect(Set(failures.all.map(\.item)) == Set(bad), "one failure notification per bad item")
        #expect(failures.all.count == bad.count)
        #expect(failures.all.allSatisfy { $0.error != nil })
    }
}
