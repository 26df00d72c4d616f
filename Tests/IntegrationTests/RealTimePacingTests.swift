import Dispatch
import Foundation
import QueuePlayer
import TestSupport
import Testing

/// Playback through a user-mode PulseAudio null sink behind ALSA's pulse plugin:
/// a real device clock, paced in real time.
@Suite(.serialized) struct RealTimePacingTests {
    @Test func fiveSecondsTakeFiveSecondsAndTheReportedTimeIsTheAudibleTime() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        // Only this test uses alsa-lib inside the test process, so the configuration can be set here.
        setenv("ALSA_CONFIG_PATH", pulse.alsaConfigPath, 1)
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = try TestMedia.makeTone(seconds: 5, in: directory, name: "five-seconds")

        let sink = ALSAAudioSink(device: "pulsenull")
        let item = PlayerItem(url: tone)
        let player = QueuePlayer(items: [item], sink: sink)
        let samples = Recorder<(wall: Double, reported: Double, audible: Double)>()
        let ticks = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100),
                                                   queue: DispatchQueue(label: "pacing.ticks")) { time in
            let audible = Double(sink.framesWritten - Int64(sink.delay())) / 44_100
            samples.append((ChildProcess.now(), time.seconds, audible))
        }
        let ended = DispatchSemaphore(value: 0)
        let observer = NotificationCenter.default.addObserver(forName: PlayerItem.didPlayToEndTimeNotification, object: item, queue: nil) { _ in
            ended.signal()
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        let start = ChildProcess.now()
        player.play()
        #expect(ended.wait(timeout: .now() + 15) == .success)
        let elapsed = ChildProcess.now() - start
        player.removeTimeObserver(ticks)

        let all = samples.all
        #expect(abs(elapsed - 5) <= 0.25, "5 s of audio took \(elapsed) s; first \(all.prefix(3).map { ($0.wall - start, $0.reported) }) last \(all.suffix(3).map { ($0.wall - start, $0.reported) })")
        #expect(sink.underruns == 0)
        let reports = samples.all
        try #require(reports.count > 100, "only \(reports.count) periodic reports")
        let last = reports[reports.count - 1]
        #expect(abs(last.reported - last.audible) <= 0.05, "last report \(last.reported) s, audible \(last.audible) s")
        let worst = reports.map { abs($0.reported - $0.audible) }.max() ?? 0
        print("pacing: 5 s of audio took \(elapsed) s; \(reports.count) reports; last off by \(last.reported - last.audible) s; worst \(worst) s")
        #expect(worst <= 0.05, "a report was \(worst) s away from the audible time")
    }

    @Test func anUnderrunIsRecoveredAndTheStreamGoesOn() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        setenv("ALSA_CONFIG_PATH", pulse.alsaConfigPath, 1)
        let sink = ALSAAudioSink(device: "pulsenull", bufferTimeMicroseconds: 100_000)
        try sink.configure(AudioFormat(sampleRate: 44_100, channelCount: 2))
        let silence = [Int16](repeating: 0, count: 4_410 * 2)
        func write() throws {
            try silence.withUnsafeBytes { bytes in
                var offset = 0
                while offset < 4_410 {
                    offset += try sink.write(UnsafeRawBufferPointer(rebasing: bytes[(offset * 4)...]), frameCount: 4_410 - offset)
                }
            }
        }
        for _ in 0..<5 { try write() }
        usleep(1_000_000)    // the device plays out and runs dry
        for _ in 0..<5 { try write() }
        #expect(sink.underruns >= 1, "the starved stream should have reported an underrun")
        #expect(sink.framesWritten == 10 * 4_410, "every frame written, before and after the recovery")
        sink.close()
    }
}
