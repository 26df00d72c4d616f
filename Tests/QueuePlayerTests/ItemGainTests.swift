import Foundation
@testable import QueuePlayer
import TestSupport
import Testing

/// Each item's own gain (``GainPolicy``): ReplayGain tags written by a real tool (loudgain,
/// which computes them), a loudness target, and the output measured by an independent meter
/// (ffmpeg's `ebur128`), through the null sink on a virtual clock.
@Suite struct ItemGainTests {
    final class Fixtures {
        let directory: URL
        init() throws { directory = try TestMedia.scratchDirectory() }
        deinit { try? FileManager.default.removeItem(at: directory) }

        /// A sox tone at `volume` (0 to 1) encoded by lame, without the ReplayGain lame writes
        /// into its header unless `lameGain`.
        func tone(_ name: String, seconds: Double = 3, frequency: Int = 440, volume: Double, lameGain: Bool = false) throws -> URL {
            let wav = directory.appendingPathComponent("\(name).wav")
            let mp3 = directory.appendingPathComponent("\(name).mp3")
            try TestMedia.run("/usr/bin/sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", wav.path, "synth", "\(seconds)",
                                               "sine", "\(frequency)", "vol", "\(volume)"])
            try TestMedia.run("/usr/bin/lame", ["--quiet", "-V", "4"] + (lameGain ? [] : ["--noreplaygain"]) + [wav.path, mp3.path])
            try FileManager.default.removeItem(at: wav)
            return mp3
        }

        /// ReplayGain 2.0 tags (reference -18 LUFS) written into `files` by loudgain, as one album.
        func tagAsAlbum(_ files: [URL]) throws {
            try TestMedia.run("/usr/bin/loudgain", ["-q", "-a", "-s", "i"] + files.map(\.path))
        }
    }

    /// What the player writes for `url` under `policy`, played out on a virtual clock.
    static func played(_ url: URL, policy: GainPolicy, measurement: LoudnessMeasurement? = nil) -> Data {
        let clock = VirtualClock()
        let sink = CapturingSink(wrapping: NullAudioSink(clock: clock))
        let player = QueuePlayer(items: [PlayerItem(url: url)], sink: sink)
        player.gainPolicy = policy
        if let measurement { player.loudnessLookup = { _ in measurement } }
        player.play()
        PlaybackRateTests.playOut(player, clock: clock, limit: 30)
        player.close()
        return sink.captured
    }

    @Test func tagsAreReadAsTheToolWroteThem() throws {
        let fixtures = try Fixtures()
        let loud = try fixtures.tone("loud", volume: 0.5)
        let quiet = try fixtures.tone("quiet", frequency: 1000, volume: 0.1)
        try fixtures.tagAsAlbum([loud, quiet])
        let tags = try #require(try MPG123Decoder(url: quiet).replayGain)
        let loudTags = try #require(try MPG123Decoder(url: loud).replayGain)
        // loudgain: the loud tone is about -6.7 LUFS, the quiet one -20; the album is the louder.
        #expect(abs(try #require(tags.trackGain) - 2) < 0.5, "\(tags)")
        #expect(abs(try #require(loudTags.trackGain) + 11.3) < 0.5, "\(loudTags)")
        #expect(tags.albumGain == loudTags.trackGain)
        #expect(abs(try #require(tags.trackPeak) - 0.1) < 0.01)
        #expect(try MPG123Decoder(url: try fixtures.tone("untagged", seconds: 1, volume: 0.3)).replayGain == nil)
    }

    /// Without tags, the gain lame wrote into its header (read by libmpg123), as mpd reads it;
    /// ffmpeg reads the same header.
    @Test func theLAMEHeadersGainIsTheFallback() throws {
        let fixtures = try Fixtures()
        let tone = try fixtures.tone("lame", volume: 0.5, lameGain: true)
        let gain = try #require(try MPG123Decoder(url: tone).replayGain?.trackGain)
        let run = try ToolRun.run("/usr/bin/ffprobe", ["-hide_banner", tone.path], timeout: 30)
        let said = try #require(run.stderr.split(separator: "\n").first { $0.contains("replaygain: track gain - ") })
        let theirs = try #require(Double(said.split(separator: "track gain - ")[1].prefix { $0 != "," }))
        #expect(abs(gain - theirs) < 0.05, "libmpg123 \(gain) dB, ffprobe \(theirs) dB")
    }

    /// An `RVA2` frame (mutagen writes it as foobar2000 and mp3gain's ID3 mode do), read by libmpg123.
    @Test func anRVA2FrameIsReadWhenThereAreNoTXXXTags() throws {
        let fixtures = try Fixtures()
        let tone = try fixtures.tone("rva2", seconds: 1, volume: 0.3)
        try TestMedia.run("/usr/bin/python3", ["-c", """
            import sys
            from mutagen.id3 import ID3, RVA2
            tag = ID3()
            tag.add(RVA2(desc="track", channel=1, gain=-6.5, peak=0.4))
            tag.add(RVA2(desc="album", channel=1, gain=-3.25, peak=0.5))
            tag.save(sys.argv[1])
            """, tone.path])
        let gains = try #require(try MPG123Decoder(url: tone).replayGain)
        #expect(abs(try #require(gains.trackGain) + 6.5) < 0.01, "\(gains)")
        #expect(abs(try #require(gains.albumGain) + 3.25) < 0.01, "\(gains)")
        // Applied as tagged: -6.5 dB in track mode, the output otherwise the file's own samples.
        let decoded = try TestMedia.decodedPCM(tone)
        let track = Self.played(tone, policy: GainPolicy(mode: .track))
        #expect(abs(FFmpegLoudness.rmsDecibels(track) - FFmpegLoudness.rmsDecibels(decoded) + 6.5) < 0.05)
    }

    @Test func trackGainBringsTheOutputToTheReferenceAndAlbumGainDiffersAsTagged() throws {
        let fixtures = try Fixtures()
        let loud = try fixtures.tone("loud", volume: 0.5)
        let quiet = try fixtures.tone("quiet", frequency: 1000, volume: 0.1)
        try fixtures.tagAsAlbum([loud, quiet])
        let tags = try #require(try MPG123Decoder(url: quiet).replayGain)
        let decoded = try TestMedia.decodedPCM(quiet)

        let track = Self.played(quiet, policy: GainPolicy(mode: .track))
        let album = Self.played(quiet, policy: GainPolicy(mode: .album))
        #expect(track.count == decoded.count && album.count == decoded.count)
        // ffmpeg hears the track at ReplayGain 2.0's reference, -18 LUFS.
        let measured = try FFmpegLoudness.measure(pcm: track, in: fixtures.directory)
        #expect(abs(measured.integrated + 18) <= 1, "\(measured)")
        // Each mode's gain, against the file as decoded: as tagged, within 0.05 dB.
        let trackGain = FFmpegLoudness.rmsDecibels(track) - FFmpegLoudness.rmsDecibels(decoded)
        let albumGain = FFmpegLoudness.rmsDecibels(album) - FFmpegLoudness.rmsDecibels(decoded)
        #expect(abs(trackGain - tags.trackGain!) < 0.05, "track \(trackGain) dB")
        #expect(abs(albumGain - tags.albumGain!) < 0.05, "album \(albumGain) dB")
        #expect(abs((trackGain - albumGain) - (tags.trackGain! - tags.albumGain!)) < 0.05)
    }

    @Test func thePreampAddsAndTheLimitKeepsThePeakFromClipping() throws {
        let fixtures = try Fixtures()
        let quiet = try fixtures.tone("quiet", frequency: 1000, volume: 0.1)
        try fixtures.tagAsAlbum([quiet])
        let tags = try #require(try MPG123Decoder(url: quiet).replayGain)
        let decoded = FFmpegLoudness.rmsDecibels(try TestMedia.decodedPCM(quiet))
        let boosted = FFmpegLoudness.rmsDecibels(Self.played(quiet, policy: GainPolicy(mode: .track, preamp: 6)))
        #expect(abs(boosted - decoded - (tags.trackGain! + 6)) < 0.05)
        // +22 dB would take a 0.1 peak past full scale: the limit stops it at 1 / peak.
        let limited = Self.played(quiet, policy: GainPolicy(mode: .track, preamp: 20))
        let peak = limited.withUnsafeBytes { $0.bindMemory(to: Int16.self).map { abs(Int($0)) }.max() ?? 0 }
        #expect(peak < 32_767, "no sample clipped")
        let unlimited = Self.played(quiet, policy: GainPolicy(mode: .track, preamp: 20, limit: false))
        let clipped = unlimited.withUnsafeBytes { $0.bindMemory(to: Int16.self).filter { abs(Int($0)) >= 32_767 }.count }
        #expect(clipped > 0, "without the limit the same gain clips")
    }

    @Test func offAndUnityLeaveTheOutputByteExact() throws {
        let fixtures = try Fixtures()
        let quiet = try fixtures.tone("quiet", frequency: 1000, volume: 0.1)
        try fixtures.tagAsAlbum([quiet])
        let decoded = try TestMedia.decodedPCM(quiet)
        #expect(Self.played(quiet, policy: GainPolicy()) == decoded, "off: the tags are not applied")
        // A target with no measurement, and tags only in a ReplayGain mode: nothing changes.
        #expect(Self.played(quiet, policy: GainPolicy(loudnessTarget: -16)) == decoded)
        let untagged = try fixtures.tone("untagged", seconds: 1, volume: 0.3)
        #expect(Self.played(untagged, policy: GainPolicy(mode: .album)) == (try TestMedia.decodedPCM(untagged)),
                "no tags, missing preamp 0 dB")
    }

    @Test func aMeasuredItemPlaysAtTheTargetItsTruePeakAtMostMinusOne() throws {
        let fixtures = try Fixtures()
        let loud = try fixtures.tone("loud", volume: 0.5)
        let meter = try FFmpegLoudness.measure(loud)
        let played = Self.played(loud, policy: GainPolicy(loudnessTarget: -16),
                                 measurement: LoudnessMeasurement(integrated: meter.integrated, truePeak: meter.truePeak))
        let heard = try FFmpegLoudness.measure(pcm: played, in: fixtures.directory)
        #expect(abs(heard.integrated + 16) <= 1, "\(heard)")

        // A quiet tone with short loud clicks: the target's gain would push the clicks past
        // -1 dBTP, so the gain stops there.
        var pcm = Data()
        for frame in 0..<(44_100 * 3) {
            let click = frame % 22_050 < 8 ? 0.6 : 0
            let value = Int16((0.05 * sin(2 * Double.pi * 440 * Double(frame) / 44_100) + click) * 32_000)
            withUnsafeBytes(of: value.littleEndian) { pcm.append(contentsOf: $0); pcm.append(contentsOf: $0) }
        }
        let wav = fixtures.directory.appendingPathComponent("clicks.wav")
        let mp3 = fixtures.directory.appendingPathComponent("clicks.mp3")
        try FFmpegLoudness.waveFile(pcm: pcm, rate: 44_100, channels: 2).write(to: wav)
        try TestMedia.run("/usr/bin/lame", ["--quiet", "-V", "4", wav.path, mp3.path])
        // Measured on what the player plays (libmpg123's 16-bit PCM), as the daemon measures.
        let clickMeter = try FFmpegLoudness.measure(pcm: try TestMedia.decodedPCM(mp3), in: fixtures.directory)
        #expect(-16 - clickMeter.integrated > -1 - clickMeter.truePeak + 3, "the target asks more than the peak allows: \(clickMeter)")
        let limited = Self.played(mp3, policy: GainPolicy(loudnessTarget: -16),
                                  measurement: LoudnessMeasurement(integrated: clickMeter.integrated, truePeak: clickMeter.truePeak))
        let limitedHeard = try FFmpegLoudness.measure(pcm: limited, in: fixtures.directory)
        #expect(limitedHeard.truePeak <= -1 + 0.2, "\(limitedHeard)")
        #expect(limitedHeard.truePeak >= -1 - 0.5, "the gain goes as far as the peak allows: \(limitedHeard)")
    }
}
