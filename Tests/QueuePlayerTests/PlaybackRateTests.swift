import Dispatch
import Foundation
@testable import QueuePlayer
import Synchronization
import TestSupport
import Testing

/// The player's rate (Sonic's time-stretcher in the render path): what comes out is measured,
/// with the null sink on a virtual clock.
@Suite struct PlaybackRateTests {
    /// Tones made once per test in a scratch directory.
    final class Fixtures {
        let directory: URL
        init() throws { directory = try TestMedia.scratchDirectory() }
        deinit { try? FileManager.default.removeItem(at: directory) }
        func tone(seconds: Double, frequency: Int = 440, name: String) throws -> URL {
            try TestMedia.makeTone(seconds: seconds, frequency: frequency, in: directory, name: name)
        }
    }

    /// A player writing to a capturing null sink on a virtual clock.
    static func player(_ urls: [URL], clock: VirtualClock) -> (QueuePlayer, CapturingSink, [PlayerItem]) {
        let sink = CapturingSink(wrapping: NullAudioSink(clock: clock))
        let items = urls.map { PlayerItem(url: $0) }
        return (QueuePlayer(items: items, sink: sink), sink, items)
    }

    /// Moves the clock on in 50 ms steps until the queue has played out (at most `limit` s);
    /// returns the clock's seconds it took.
    @discardableResult
    static func playOut(_ player: QueuePlayer, clock: VirtualClock, limit: Double) -> Double {
        let start = clock.now()
        while player.currentItem != nil && Double(clock.now() - start) / 1e9 < limit {
            clock.advance(bySeconds: 0.05)
        }
        clock.advance(bySeconds: 0.3)
        return Double(clock.now() - start) / 1e9
    }

    /// The left channel of interleaved stereo 16-bit PCM.
    static func left(_ pcm: Data) -> [Int16] {
        pcm.withUnsafeBytes { raw in
            let samples = raw.bindMemory(to: Int16.self)
            return stride(from: 0, to: samples.count - 1, by: 2).map { samples[$0] }
        }
    }

    /// The frequency of a tone, from the rising zero crossings of `samples` (at 44.1 kHz).
    static func frequency(_ samples: ArraySlice<Int16>) -> Double {
        var crossings = 0
        var previous = samples.first ?? 0
        var first: Int?
        var last = 0
        for (index, sample) in zip(samples.indices, samples) {
            if previous < 0 && sample >= 0 {
                crossings += 1
                if first == nil { first = index }
                last = index
            }
            previous = sample
        }
        guard let first, crossings > 1 else { return 0 }
        return Double(crossings - 1) * 44_100 / Double(last - first)
    }

    /// The longest run of samples quieter than `threshold`, and where it starts.
    static func longestQuietRun(_ samples: ArraySlice<Int16>, below threshold: Int16) -> (length: Int, at: Int) {
        var longest = (length: 0, at: 0)
        var run = 0
        for (index, sample) in zip(samples.indices, samples) {
            if abs(Int(sample)) < Int(threshold) {
                run += 1
                if run > longest.length { longest = (run, index - run + 1) }
            } else {
                run = 0
            }
        }
        return longest
    }

    @Test func atRateTwoAnItemPlaysInHalfItsDurationAndTellsItsOwnTime() throws {
        let fixtures = try Fixtures()
        let url = try fixtures.tone(seconds: 6, name: "six")
        let frames = try TestMedia.frameCount(url)
        let clock = VirtualClock()
        let (player, sink, _) = Self.player([url], clock: clock)
        player.rate = 2
        #expect(player.rate == 2)
        #expect(player.timeControlStatus == .playing)
        clock.advance(bySeconds: 1)
        // The item's own time, what is heard: two seconds of it per second (within the
        // stretcher's window and a tick).
        let told = player.currentTime().seconds
        #expect(abs(told - 2) < 0.06, "after 1 s at 2x: \(told) s")
        Self.playOut(player, clock: clock, limit: 10)
        let written: Double = Double(sink.capturedFrames)
        let due: Double = Double(frames) / 2
        // N frames of item in N/2 frames of output, within 1 %.
        #expect(abs(written - due) < due * 0.01, "\(written) frames for \(frames) at 2x")
    }

    @Test(arguments: [(AudioTimePitchAlgorithm.timeDomain, 1.0), (.varispeed, 2.0)])
    func aToneKeepsItsPitchInTimeDomainAndFollowsTheRateInVarispeed(algorithm: AudioTimePitchAlgorithm, factor: Double) throws {
        let fixtures = try Fixtures()
        let url = try fixtures.tone(seconds: 4, frequency: 440, name: "a440")
        let clock = VirtualClock()
        let (player, sink, items) = Self.player([url], clock: clock)
        items[0].audioTimePitchAlgorithm = algorithm
        #expect(items[0].audioTimePitchAlgorithm == algorithm)
        player.rate = 2
        Self.playOut(player, clock: clock, limit: 6)
        let left = Self.left(sink.captured)
        try #require(left.count > 44_100)
        let middle = left[(left.count / 4)..<(left.count * 3 / 4)]
        let heard = Self.frequency(middle)
        let expected = 440 * factor
        #expect(abs(heard - expected) / expected < 0.015, "\(algorithm) at 2x: \(heard) Hz, not \(expected) Hz")
    }

    @Test func atRateOneTheOutputIsTheDecodedAudioByteForByte() throws {
        let urls = Array(TestMedia.stereo.prefix(2))
        try #require(urls.count == 2)
        let clock = VirtualClock()
        let (player, sink, _) = Self.player(urls, clock: clock)
        player.defaultRate = 1.5
        player.defaultRate = 1
        player.rate = 1
        Self.playOut(player, clock: clock, limit: 120)
        let expected = try urls.map(TestMedia.decodedPCM).reduce(Data(), +)
        #expect(sink.captured == expected, "\(sink.captured.count) bytes, \(expected.count) decoded")
    }

    @Test func itemsJoinWithoutAGapAtOnePointFive() throws {
        let fixtures = try Fixtures()
        let first = try fixtures.tone(seconds: 2, frequency: 300, name: "first")
        let second = try fixtures.tone(seconds: 2, frequency: 500, name: "second")
        let frames = try TestMedia.frameCount(first) + TestMedia.frameCount(second)
        let clock = VirtualClock()
        let (player, sink, items) = Self.player([first, second], clock: clock)
        let ended = Recorder<Double>()
        let observer = NotificationCenter.default.addObserver(forName: PlayerItem.didPlayToEndTimeNotification, object: items[0], queue: nil) { _ in
            ended.append(0)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        player.rate = 1.5
        Self.playOut(player, clock: clock, limit: 6)
        #expect(ended.all.count == 1)
        let left = Self.left(sink.captured)
        let due: Double = Double(frames) / 1.5
        let written: Double = Double(left.count)
        #expect(abs(written - due) < due * 0.01, "\(left.count) frames for \(frames) at 1.5x")
        // Tones at half scale: a gap would be a stretch of samples near zero far longer than a
        // zero crossing's (the 500 Hz tone spends about 0.2 ms near zero per crossing).
        let interior = left[2_000..<(left.count - 2_000)]
        let quiet = Self.longestQuietRun(interior, below: 1_000)
        #expect(quiet.length < 44, "a quiet run of \(quiet.length) samples at \(quiet.at) of \(left.count)")
    }

    @Test func aPeriodicObserverStepsInItemTimeEveryFiveMillisecondsAtTwice() throws {
        let fixtures = try Fixtures()
        let url = try fixtures.tone(seconds: 10, name: "ten")
        let clock = VirtualClock()
        let (player, _, _) = Self.player([url], clock: clock)
        let queue = DispatchQueue(label: "ticks")
        let times = Recorder<(wall: UInt64, item: Double)>()
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100), queue: queue) { [clock] time in
            times.append((clock.now(), time.seconds))
        }
        player.rate = 2
        clock.advance(bySeconds: 1)
        player.pause()
        queue.sync {}
        player.removeTimeObserver(token)
        // Past the start (the stretcher's window is heard first), each call is the next 10 ms
        // of the item, 5 ms of the clock after the last. What is heard moves in output frames,
        // two item frames each at 2x: a tick that falls between two is told at the second.
        let steady = times.all.filter { $0.item > 0.1 }
        try #require(steady.count > 150, "\(steady.count) calls")
        let heardStep = 2.0 / 44_100 + 1e-9
        let offGrid = steady.filter { $0.item - ($0.item * 100).rounded() / 100 > heardStep || $0.item - ($0.item * 100).rounded() / 100 < -1e-9 }
        #expect(offGrid.isEmpty, "times off the 10 ms grid: \(offGrid.prefix(5).map(\.item))")
        let steps = zip(steady, steady.dropFirst()).map { (item: $1.item - $0.item, wall: Double($1.wall - $0.wall) / 1e9) }
        #expect(steps.allSatisfy { abs($0.item - 0.01) < heardStep }, "item steps: \(steps.filter { abs($0.item - 0.01) >= heardStep }.prefix(5))")
        let meanWall = steps.map(\.wall).reduce(0, +) / Double(steps.count)
        #expect(abs(meanWall - 0.005) < 0.0002, "a call every \(meanWall * 1000) ms of the clock")
        #expect(abs((steady.last?.item ?? 0) - 2) < 0.06)
    }

    @Test func elapsedIsContinuousAcrossChangesOfRate() throws {
        let fixtures = try Fixtures()
        let url = try fixtures.tone(seconds: 20, name: "twenty")
        let clock = VirtualClock()
        let (player, _, _) = Self.player([url], clock: clock)
        player.play()
        var told: [(rate: Float, seconds: Double)] = []
        for rate: Float in [1, 2, 0.5, 3, 1] {
            player.rate = rate
            for _ in 0..<100 {
                clock.advance(bySeconds: 0.01)
                told.append((rate, player.currentTime().seconds))
            }
        }
        // Every 10 ms of the clock the item moves on by what the rates allow (the largest 3x,
        // and a step may straddle a change heard late, within the output's buffer): never back,
        // never by a jump.
        let steps = zip(told, told.dropFirst()).map { $1.seconds - $0.seconds }
        #expect(steps.allSatisfy { $0 >= 0 }, "time went back: \(steps.filter { $0 < 0 }.prefix(5))")
        #expect(steps.allSatisfy { $0 <= 0.031 }, "jumps: \(steps.filter { $0 > 0.031 }.prefix(5))")
        // Overall: 1 + 2 + 0.5 + 3 + 1 seconds of the item in 5 s, within the output's buffer.
        #expect(abs((told.last?.seconds ?? 0) - 7.5) < 0.25, "\(told.last?.seconds ?? 0) s of the item")
    }

    @Test func ratesOutsideTheRangeAreClampedAndInvalidOnesIgnored() throws {
        let url = try #require(TestMedia.stereo.first)
        let clock = VirtualClock()
        let (player, _, _) = Self.player([url], clock: clock)
        let observed = Recorder<Float>()
        let observation = player.observe(\.rate, options: [.new]) { _, change in
            if let rate = change.newValue { observed.append(rate) }
        }
        let posted = Recorder<QueuePlayer.RateDidChangeReason>()
        let notification = NotificationCenter.default.addObserver(forName: QueuePlayer.rateDidChangeNotification, object: player, queue: nil) { note in
            if let reason = note.userInfo?[QueuePlayer.rateDidChangeReasonKey] as? QueuePlayer.RateDidChangeReason { posted.append(reason) }
        }
        defer { NotificationCenter.default.removeObserver(notification) }
        player.rate = -1
        player.rate = .nan
        player.rate = .infinity
        #expect(player.rate == 0)
        player.rate = 100
        #expect(player.rate == QueuePlayer.supportedRates.upperBound)
        player.rate = 0.1
        #expect(player.rate == QueuePlayer.supportedRates.lowerBound)
        player.rate = 0
        player.defaultRate = 0
        player.defaultRate = -2
        #expect(player.defaultRate == 1)
        player.defaultRate = 1.5
        player.play()
        #expect(player.rate == 1.5)
        #expect(observed.all == [3, 0.5, 0, 1.5])
        #expect(posted.all == [.setRateCalled, .setRateCalled, .setRateCalled, .setRateCalled])
        observation.invalidate()
    }
}

/// Skip silence: quiet stretches shortened, measured in what the sink was given.
@Suite struct SkipSilenceTests {
    /// Two seconds of a tone, three at `quietVolume`, two of the tone again (sox, then lame).
    static func gapFile(quietVolume: String, in directory: URL, name: String) throws -> URL {
        func part(_ seconds: Int, _ volume: String, _ partName: String) throws -> String {
            let path = directory.appendingPathComponent("\(name)-\(partName).wav").path
            try TestMedia.run("/usr/bin/sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "\(seconds)", "sine", "440", "vol", volume])
            return path
        }
        let wav = directory.appendingPathComponent("\(name).wav").path
        let mp3 = directory.appendingPathComponent("\(name).mp3")
        try TestMedia.run("/usr/bin/sox", [try part(2, "0.5", "a"), try part(3, quietVolume, "b"), try part(2, "0.5", "c"), wav])
        try TestMedia.run("/usr/bin/lame", ["--quiet", "-V", "4", wav, mp3.path])
        return mp3
    }

    /// The seconds of 10 ms windows whose peak is under −50 dBFS, between the first and last loud one.
    static func quietSeconds(_ left: [Int16]) -> Double {
        let windows = stride(from: 0, to: left.count - 441, by: 441).map { start in
            left[start..<(start + 441)].map { abs(Int($0)) }.max() ?? 0
        }
        guard let first = windows.firstIndex(where: { $0 >= 104 }), let last = windows.lastIndex(where: { $0 >= 104 }) else { return 0 }
        return Double(windows[first...last].filter { $0 < 104 }.count) / 100
    }

    @Test func aThreeSecondGapAtMinusSixtyIsShortenedAndTheTimeSkipsIt() throws {
        let fixtures = try PlaybackRateTests.Fixtures()
        let url = try Self.gapFile(quietVolume: "0.001", in: fixtures.directory, name: "gap60")
        let clock = VirtualClock()
        let (player, sink, items) = PlaybackRateTests.player([url], clock: clock)
        player.skipsSilence = true
        let queue = DispatchQueue(label: "ticks")
        let times = Recorder<Double>()
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 10), queue: queue) { times.append($0.seconds) }
        player.play()
        let took = PlaybackRateTests.playOut(player, clock: clock, limit: 10)
        queue.sync {}
        player.removeTimeObserver(token)
        let left = PlaybackRateTests.left(sink.captured)
        let remaining = Self.quietSeconds(left)
        #expect(remaining >= 0.2 && remaining <= 0.5, "\(remaining) s of the gap remain")
        let skipped = items[0].silenceSkipped
        #expect(abs(skipped + remaining - 3) < 0.06, "\(skipped) s skipped, \(remaining) s remain")
        #expect(abs(Double(left.count) / 44_100 - (7 - skipped)) < 0.03, "\(Double(left.count) / 44_100) s written")
        #expect(took < 5.5, "the item took \(took) s of the clock")
        // The item's time jumps over what was cut, as a seek would, and never goes back.
        let all = times.all
        let jumps = zip(all, all.dropFirst()).map { $1 - $0 }
        #expect(jumps.allSatisfy { $0 >= 0 })
        #expect(jumps.contains { $0 > 2 }, "no jump over the gap in \(all)")
    }

    @Test func aPassageAtMinusFortyIsUntouched() throws {
        let fixtures = try PlaybackRateTests.Fixtures()
        let url = try Self.gapFile(quietVolume: "0.01", in: fixtures.directory, name: "gap40")
        let clock = VirtualClock()
        let (player, sink, items) = PlaybackRateTests.player([url], clock: clock)
        player.skipsSilence = true
        player.play()
        PlaybackRateTests.playOut(player, clock: clock, limit: 10)
        #expect(items[0].silenceSkipped == 0)
        #expect(sink.captured == (try TestMedia.decodedPCM(url)))
    }

    @Test func anItemsOwnSettingWinsAndSkipsAtOnePointFiveToo() throws {
        let fixtures = try PlaybackRateTests.Fixtures()
        let url = try Self.gapFile(quietVolume: "0.001", in: fixtures.directory, name: "gap60")
        let clock = VirtualClock()
        let (player, sink, items) = PlaybackRateTests.player([url], clock: clock)
        items[0].skipsSilence = true
        player.rate = 1.5
        PlaybackRateTests.playOut(player, clock: clock, limit: 10)
        let remaining = Self.quietSeconds(PlaybackRateTests.left(sink.captured))
        // At 1.5x the 0.3 s kept is heard in 0.2 s.
        #expect(remaining >= 0.13 && remaining <= 0.34, "\(remaining) s of the gap remain at 1.5x")
        #expect(items[0].silenceSkipped > 2.4)
    }
}
