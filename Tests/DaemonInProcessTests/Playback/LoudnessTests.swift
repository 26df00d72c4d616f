import DaemonCore
import Foundation
import TestSupport
import Testing

/// Even loudness through the whole daemon: `replay_gain_mode` and `replay_gain_status` as
/// mpd's, `loudnessscan` and `loudness`, and a loudness target heard on the FIFO output,
/// measured by ffmpeg's `ebur128` filter.
@Suite(.serialized) struct LoudnessTests {
    @Test func theReplayGainModeIsSetCheckedAndKeptWithTheState() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let daemon = try InProcessDaemon(directory: directory)
            defer { daemon.stop() }
            let client = try daemon.client()
            #expect(try client.request("replay_gain_status") == ["replay_gain_mode: off", "OK"])
            let refused = try client.request("replay_gain_mode loud")
            #expect(refused.count == 1 && refused[0].hasPrefix("ACK [2@0] {replay_gain_mode} "), "\(refused)")
            #expect(["off", "track", "album", "auto"].allSatisfy { refused[0].contains($0) }, "names the values: \(refused)")
            #expect(try client.request("replay_gain_status") == ["replay_gain_mode: off", "OK"], "nothing changed")
            for mode in ["track", "album", "off", "auto"] {
                #expect(try client.request("replay_gain_mode \(mode)") == ["OK"])
                #expect(try client.request("replay_gain_status") == ["replay_gain_mode: \(mode)", "OK"])
            }
            #expect(try client.request("replay_gain_mode").first?.hasPrefix("ACK [2@0] {replay_gain_mode}") == true)
        }
        // The mode came back with the saved state.
        let again = try InProcessDaemon(directory: directory)
        defer { again.stop() }
        #expect(try again.client().request("replay_gain_status") == ["replay_gain_mode: auto", "OK"])
    }

    /// `auto` is the album's gain in order and the track's at random, as the item plays.
    @Test func autoFollowsRandom() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let loud = try TestMedia.makeTone(seconds: 30, in: directory, name: "loud")
        let wav = directory.appendingPathComponent("quiet.wav")
        try TestMedia.run("/usr/bin/sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", wav.path, "synth", "30", "sine", "1000", "vol", "0.05"])
        let quiet = directory.appendingPathComponent("quiet.mp3")
        try TestMedia.run("/usr/bin/lame", ["--quiet", "-V", "4", wav.path, quiet.path])
        try TestMedia.run("/usr/bin/loudgain", ["-q", "-a", "-s", "i", loud.path, quiet.path])
        let daemon = try InProcessDaemon(directory: directory) { $0.files = [quiet.path, loud.path] }
        defer { daemon.stop() }
        let client = try daemon.client()
        func gain() throws -> Double { try #require(try daemon.request("loudness")["gain"].flatMap(Double.init)) }
        #expect(try client.request("pause 1") == ["OK"])
        #expect(abs(try gain()) < 0.001, "off: no gain")
        #expect(try client.request("replay_gain_mode auto") == ["OK"])
        let albumGain = try gain()
        #expect(try client.request("random 1") == ["OK"])
        let trackGain = try gain()
        // loudgain: the quiet tone's track gain is about +8 dB, the album's (the louder tone's) about -11.
        #expect(albumGain < -10 && albumGain > -13, "album \(albumGain)")
        #expect(trackGain > 6 && trackGain < 10, "track \(trackGain)")
        #expect(try client.request("random 0") == ["OK"])
        #expect(try gain() == albumGain)
    }

    @Test func aScannedFilePlaysAtTheLoudnessTarget() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let music = directory.appendingPathComponent("music")
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        let tone = try TestMedia.makeTone(seconds: 3, in: music, name: "tone")
        let fifo = directory.appendingPathComponent("audio.fifo").path
        let daemon = try InProcessDaemon(directory: directory) {
            $0.musicDirectory = music.path
            $0.outputs = [try #require(OutputChoice(argument: "fifo:\(fifo)"))]
            $0.loudness.target = -16
        }
        defer { daemon.stop() }
        let client = try daemon.client()
        #expect(try client.request("loudness tone.mp3") == ["file: tone.mp3", "OK"], "not measured yet")
        #expect(try client.request("loudnessscan nothing.mp3").first?.hasPrefix("ACK [50@0] {loudnessscan}") == true)
        #expect(try client.request("loudnessscan ../etc/passwd").first?.hasPrefix("ACK [50@0] {loudnessscan}") == true)
        #expect(try client.request("loudnessscan").first?.hasPrefix("ACK [55@0] {loudnessscan}") == true, "nothing plays")
        let job = try client.request("loudnessscan tone.mp3")
        #expect(job == ["loudnessscan: 1", "OK"])
        var fields: [String: String] = [:]
        let measured = waitUntil(timeout: 20) {
            fields = (try? daemon.request("loudness tone.mp3")) ?? [:]
            return fields["loudness"] != nil
        }
        #expect(measured, "log: \(daemon.standardError)")
        let meter = try FFmpegLoudness.measure(tone)
        let loudness = try #require(fields["loudness"].flatMap(Double.init))
        let peak = try #require(fields["truepeak"].flatMap(Double.init))
        #expect(abs(loudness - meter.integrated) <= 0.2 && abs(peak - meter.truePeak) <= 0.3, "\(fields) vs ffmpeg \(meter)")

        // Played: what the FIFO's reader gets is at the target.
        let captured = directory.appendingPathComponent("captured.pcm")
        let reader = try FIFOCapture.reader(fifo, into: captured)
        defer { reader.terminate() }
        let expected = try TestMedia.decodedPCM(tone).count
        #expect(try client.request("add tone.mp3") == ["OK"])
        #expect(try client.request("play") == ["OK"])
        let gain = try #require(try daemon.request("loudness")["gain"].flatMap(Double.init))
        #expect(abs(gain - (-16 - loudness)) < 0.05, "gain \(gain) dB")
        // The song played to its end; the reader may have missed its first moments (a FIFO with no
        // reader yet drops audio), and a steady tone's loudness is the same in any part.
        #expect(waitUntil(timeout: 20) { (try? daemon.request("status"))?["state"] == "stop" }, "log: \(daemon.standardError)")
        #expect(waitUntil(timeout: 5) { FIFOCapture.size(captured) >= expected / 2 }, "\(FIFOCapture.size(captured)) of \(expected) bytes")
        let pcm = try Data(contentsOf: captured).prefix(expected)
        let heard = try FFmpegLoudness.measure(pcm: pcm, in: directory)
        #expect(abs(heard.integrated + 16) <= 1, "heard \(heard)")
        #expect(heard.truePeak <= -1 + 0.2, "heard \(heard)")
    }
}
