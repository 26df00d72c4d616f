import Dispatch
import Foundation
import QueuePlayer
import TestSupport
import Testing

/// Playback through a user-mode PulseAudio null sink behind ALSA's pulse plugin:
/// a real device clock, paced in real time.
@Suite(.serialized) struct RealTimePacingTests {
    /// The reported time is the audible time, measured the way it is defined: the reference
    /// is what the sink said about its stream on the render thread right after each write
    /// (frames accepted minus delay, with the time of asking), interpolated at the instant
    /// the observer's block stamped its report. The properties are over the whole run, past
    /// the first 300 ms after the first write (the stream's start-up; the time before it,
    /// opening the device, is not what this test is about). A loaded machine may delay a few
    /// blocks, and a percentile tolerates that where a single worst sample would not.
    @Test func fiveSecondsTakeFiveSecondsAndTheReportedTimeIsTheAudibleTime() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        // Only this suite uses alsa-lib inside the test process, so the configuration can be set here.
        setenv("ALSA_CONFIG_PATH", pulse.alsaConfigPath, 1)
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = try TestMedia.makeTone(seconds: 5, in: directory, name: "five-seconds")
        let expectedFrames = try ReferenceDecoder.decode(tone).pcm.count / 4

        let device = ALSAAudioSink(device: "pulsenull")
        let sink = MeasuringSink(wrapping: device)
        let item = PlayerItem(url: tone)
        let player = QueuePlayer(items: [item], sink: sink)
        let reports = Recorder<(stamp: Double, reported: Double)>()
        let ticks = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100),
                                                   queue: DispatchQueue(label: "pacing.ticks")) { time in
            reports.append((ChildProcess.now(), time.seconds))
        }
        let ended = DispatchSemaphore(value: 0)
        let endedAt = Recorder<Double>()
        let observer = NotificationCenter.default.addObserver(forName: PlayerItem.didPlayToEndTimeNotification, object: item, queue: nil) { _ in
            endedAt.append(ChildProcess.now())
            ended.signal()
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        let start = ChildProcess.now()
        player.play()
        try #require(ended.wait(timeout: .now() + 30) == .success, "the item did not end")
        player.removeTimeObserver(ticks)
        let end = try #require(endedAt.all.first)

        #expect(device.framesWritten == Int64(expectedFrames), "every decoded frame reaches the device")
        #expect(device.underruns == 0)
        let measurements = sink.measurements
        let firstWrite = try #require(measurements.first?.time, "nothing was written")
        let playing = reports.all.filter { $0.stamp - firstWrite >= 0.3 && $0.stamp <= end }
        try #require(playing.count >= 300, "only \(playing.count) periodic reports in \(end - firstWrite - 0.3) s")
        let errors = try playing.map { report in
            let audible = try #require(measurements.audibleFrame(at: report.stamp, sampleRate: 44_100))
            return abs(report.reported - audible / 44_100)
        }
        let median = try #require(Statistics.median(errors))
        let p95 = try #require(Statistics.percentile(95, of: errors))
        let decreases = zip(playing, playing.dropFirst()).filter { $1.reported < $0.reported }
        let slope = try #require(Statistics.slope(playing.map { (x: $0.stamp, y: $0.reported) }))
        // The longest the render thread went without writing: a stream held back at its start shows here.
        let longestGap = zip(measurements, measurements.dropFirst()).map { $1.time - $0.time }.max() ?? 0
        print("pacing: 5 s of audio took \(end - start) s, the first write \(firstWrite - start) s after play(); "
              + "longest between writes \(longestGap * 1000) ms; \(playing.count) reports from 300 ms after the first write; "
              + "error median \(median * 1000) ms, p95 \(p95 * 1000) ms, max \((errors.max() ?? 0) * 1000) ms; slope \(slope)")
        #expect(median <= 0.010, "median error \(median) s between the reported and the audible time")
        #expect(p95 <= 0.030, "95th percentile error \(p95) s between the reported and the audible time")
        #expect(decreases.isEmpty, "the reported time went back: \(decreases.prefix(5))")
        #expect(abs(slope - 1) <= 0.005, "reported time against wall time has slope \(slope)")
    }

    @Test func anUnderrunIsRecoveredAndTheStreamGoesOn() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        let sink = try Self.openSink(on: pulse, bufferTimeMicroseconds: 100_000)
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
        // The device plays out and runs dry; asking for the delay is what makes alsa-lib notice.
        let deadline = ChildProcess.now() + 10
        while !sink.isStarved && ChildProcess.now() < deadline {
            _ = sink.delay()
            usleep(5_000)
        }
        try #require(sink.isStarved, "0.5 s of audio written and nothing more, yet no underrun after 10 s")
        for _ in 0..<5 { try write() }
        // Frames the sink gathered for one write go to the device before it drains.
        let drainDeadline = ChildProcess.now() + 10
        while !sink.waitUntilDrained(timeoutNanoseconds: 10_000_000) && ChildProcess.now() < drainDeadline {}
        #expect(sink.underruns >= 1, "the starved stream should have reported an underrun")
        #expect(sink.framesWritten == 10 * 4_410, "every frame written, before and after the recovery")
        sink.close()
    }

    /// With the device full, writes gather at most a period ahead; the write that must then
    /// wait for room waits in `poll(2)`, and a command posted meanwhile
    /// (``AudioSink/interruptWrite()``) ends that wait at once: the write returns 0 frames, and
    /// nothing taken before is lost. With the interruption ignored, that write would instead
    /// wait until the device had room and return frames.
    @Test func aWriteWaitingForRoomReturnsWhenInterruptedAndLosesNothing() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        // A 2 s buffer: room for the rest comes only after seconds of playing, long after the interruption.
        let sink = try Self.openSink(on: pulse, bufferTimeMicroseconds: 2_000_000)
        defer { sink.close() }
        let frames = 10 * 44_100
        let silence = [Int16](repeating: 0, count: frames * 2)
        try silence.withUnsafeBytes { bytes in
            let first = try sink.write(bytes, frameCount: frames)
            #expect(first > 0 && first < frames, "a write larger than the buffer takes what fits and returns (took \(first))")
            sink.interruptWrite()
            var gathered = 0
            var last = -1
            for _ in 0..<64 {
                last = try sink.write(UnsafeRawBufferPointer(rebasing: bytes[((first + gathered) * 4)...]), frameCount: frames - first - gathered)
                if last == 0 { break }
                gathered += last
            }
            #expect(last == 0, "no write returned 0 frames after the interruption (\(gathered) frames taken)")
            // The first write filled the device's buffer; the sink gathers half a buffer at most.
            #expect(gathered < first, "the sink took \(gathered) frames beyond a full buffer of \(first)")
            #expect(sink.framesWritten == Int64(first), "what the first write took is written, nothing more")
            // The device holds at most the first write's frames (less what played in these few
            // milliseconds); only with the gathered period counted is the delay beyond them.
            let delay = sink.delay()
            #expect(delay > first, "the \(gathered) frames taken after the first write do not count as buffered (delay \(delay), first write \(first))")
            // Not interrupted, a write waits for room, gives the device what was gathered, and takes frames.
            let third = try sink.write(UnsafeRawBufferPointer(rebasing: bytes[((first + gathered) * 4)...]), frameCount: frames - first - gathered)
            #expect(third > 0, "a write that waits for room takes frames once the device has played some")
            #expect(sink.framesWritten == Int64(first + gathered), "the gathered frames went to the device, nothing more")
        }
    }

    /// An ALSA sink on `pulse`'s null sink, open for 44.1 kHz stereo.
    static func openSink(on pulse: PulseServer, bufferTimeMicroseconds: UInt32) throws -> ALSAAudioSink {
        setenv("ALSA_CONFIG_PATH", pulse.alsaConfigPath, 1)
        let sink = ALSAAudioSink(device: "pulsenull", bufferTimeMicroseconds: bufferTimeMicroseconds)
        try sink.configure(AudioFormat(sampleRate: 44_100, channelCount: 2))
        return sink
    }
}
