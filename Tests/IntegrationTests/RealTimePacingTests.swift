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
    /// the observer's block stamped its report. The reported time is compared over the whole
    /// run past the first 300 ms after the first write (the stream's start-up; the time before
    /// it, opening the device, is not what this test is about). The pace (reported against
    /// wall time) is taken from 1.5 s after the first write: the null sink sometimes holds a
    /// new stream back for up to a second, which rightly slows the reported time too. A loaded
    /// machine may delay a few blocks, and a percentile tolerates that where a single worst
    /// sample would not.
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
        let paced = playing.filter { $0.stamp - firstWrite >= 1.5 }
        try #require(paced.count >= 250, "only \(paced.count) periodic reports from 1.5 s after the first write")
        let slope = try #require(Statistics.slope(paced.map { (x: $0.stamp, y: $0.reported) }))
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
            // Until the device has played a period (1 s here), a wait for room is short anyway
            // (next test). Wait until it is below half full (so it has played more than that):
            // a write then goes straight to it and fills it.
            try #require(waitUntil(timeout: 10) { sink.delay() <= 40_000 }, "the device did not play 1.8 s in 10 s")
            var offset = first
            offset += try sink.write(UnsafeRawBufferPointer(rebasing: bytes[(offset * 4)...]), frameCount: frames - offset)
            let full = Int(sink.framesWritten)
            try #require(offset == full, "the write to a device below half full was gathered")
            let before = sink.delay()
            sink.interruptWrite()
            var last = -1
            for _ in 0..<64 {
                last = try sink.write(UnsafeRawBufferPointer(rebasing: bytes[(offset * 4)...]), frameCount: frames - offset)
                if last == 0 { break }
                offset += last
            }
            let gathered = offset - full
            #expect(last == 0, "no write returned 0 frames after the interruption (\(gathered) frames taken)")
            // The device is full; the sink gathers half a buffer at most.
            #expect(gathered < first, "the sink took \(gathered) frames beyond a full buffer of \(first)")
            #expect(sink.framesWritten == Int64(full), "what went to the device before is written, nothing more")
            // The device played a few milliseconds since `before`; only with the frames
            // gathered since counted is the delay beyond it.
            let delay = sink.delay()
            #expect(delay > before, "the \(gathered) frames gathered do not count as buffered (delay \(delay), before \(before))")
            // Not interrupted, a write waits for room, gives the device what was gathered, and
            // takes frames (heard playing, the sink waits for room: a 0 would be a wait that gave up).
            let third = try sink.write(UnsafeRawBufferPointer(rebasing: bytes[(offset * 4)...]), frameCount: frames - offset)
            #expect(third > 0, "a write that waits for room takes frames once the device has played some")
            #expect(sink.framesWritten == Int64(offset), "the gathered frames went to the device, nothing more")
        }
    }

    /// Until the device has played a period (behind the pulse plugin a new stream sometimes
    /// stands still for hundreds of milliseconds), a write that finds no room waits briefly
    /// and returns 0, uninterrupted, so the render thread measures the stream again and the
    /// player's time cannot run ahead of a device that does not play. Nothing is lost: what
    /// was gathered goes to the device with a later write. A write that began after the device
    /// could have played a period, or on a device whose delay already says it has, says nothing
    /// (it may rightly wait for room): the test opens a new stream then, up to five times.
    @Test func beforeTheDeviceIsHeardAWriteWithNoRoomReturnsSoonAndLosesNothing() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        let frames = 10 * 44_100
        let silence = [Int16](repeating: 0, count: frames * 2)
        var tested = false
        for _ in 0..<5 where !tested {
            // A 2 s buffer: with the device heard, room for the gathered second would come a second later.
            let sink = try Self.openSink(on: pulse, bufferTimeMicroseconds: 2_000_000)
            defer { sink.close() }
            try silence.withUnsafeBytes { bytes in
                let first = try sink.write(bytes, frameCount: frames)
                let filled = ChildProcess.now()
                // The sink judges "heard" by the delay; the pulse plugin's can fall short of what
                // was written at once (seen in CI), and the sink then rightly waits for room.
                let heardAtStart = first - sink.delay()
                var taken = 0
                var last = -1
                var began = filled, ended = filled
                for _ in 0..<64 {
                    began = ChildProcess.now()
                    last = try sink.write(UnsafeRawBufferPointer(rebasing: bytes[((first + taken) * 4)...]), frameCount: frames - first - taken)
                    ended = ChildProcess.now()
                    if last == 0 || ended - began >= 0.25 { break }
                    taken += last
                }
                guard began - filled < 0.3, heardAtStart < 4_410 else { return }
                tested = true
                if last > 0 { taken += last }
                #expect(last == 0, "no write returned 0 frames before the device was heard (\(taken) frames taken)")
                #expect(ended - began < 0.25, "a write with no room waited \(ended - began) s before the device was heard")
                #expect(sink.framesWritten == Int64(first), "what the first write took is written, nothing more")
                // Later writes take frames again, and what was gathered reaches the device.
                let deadline = ChildProcess.now() + 10
                var more = 0
                while more == 0 && ChildProcess.now() < deadline {
                    more = try sink.write(UnsafeRawBufferPointer(rebasing: bytes[((first + taken) * 4)...]), frameCount: frames - first - taken)
                }
                #expect(more > 0, "no write took frames in 10 s")
                #expect(sink.framesWritten == Int64(first + taken), "the gathered frames went to the device, nothing more")
            }
        }
        #expect(tested, "in five streams, no write began within 300 ms of the first with the device not yet heard")
    }

    /// An ALSA sink on `pulse`'s null sink, open for 44.1 kHz stereo.
    static func openSink(on pulse: PulseServer, bufferTimeMicroseconds: UInt32) throws -> ALSAAudioSink {
        setenv("ALSA_CONFIG_PATH", pulse.alsaConfigPath, 1)
        let sink = ALSAAudioSink(device: "pulsenull", bufferTimeMicroseconds: bufferTimeMicroseconds)
        try sink.configure(AudioFormat(sampleRate: 44_100, channelCount: 2))
        return sink
    }
}
