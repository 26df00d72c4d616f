import Foundation
import Loudness
import QueuePlayer
import TestSupport
import Testing

/// libebur128 through the engine's decoder (``LoudnessScanner``) against ffmpeg's `ebur128`
/// filter, an independent meter, on the same files.
@Suite struct LoudnessScannerTests {
    @Test(arguments: [(0.5, 440), (0.05, 1000)])
    func theMeasurementAgreesWithFFmpeg(volume: Double, frequency: Int) throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("tone.wav")
        let mp3 = directory.appendingPathComponent("tone.mp3")
        try TestMedia.run("/usr/bin/sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", wav.path, "synth", "3",
                                           "sine", "\(frequency)", "vol", "\(volume)"])
        try TestMedia.run("/usr/bin/lame", ["--quiet", "-V", "4", wav.path, mp3.path])
        let ours = try LoudnessScanner.measure(mp3)
        let theirs = try FFmpegLoudness.measure(mp3)
        #expect(abs(ours.integrated - theirs.integrated) <= 0.2, "ours \(ours), ffmpeg \(theirs)")
        #expect(abs(ours.truePeak - theirs.truePeak) <= 0.3, "ours \(ours), ffmpeg \(theirs)")
    }

    @Test func silenceHasNoLoudnessAndAFileThatIsNotMP3Fails() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("silence.wav")
        let mp3 = directory.appendingPathComponent("silence.mp3")
        try TestMedia.run("/usr/bin/sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", wav.path, "trim", "0", "1"])
        try TestMedia.run("/usr/bin/lame", ["--quiet", "-V", "4", wav.path, mp3.path])
        let silent = try LoudnessScanner.measure(mp3)
        #expect(silent.integrated == -.infinity)
        let text = directory.appendingPathComponent("notes.mp3")
        try Data("not audio at all\n".utf8).write(to: text)
        #expect(throws: LoudnessScanner.Failure.self) { try LoudnessScanner.measure(text) }
    }

    @Test func aCancelledMeasurementStops() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = try TestMedia.makeTone(seconds: 2, in: directory, name: "tone")
        #expect(throws: LoudnessScanner.Failure.cancelled) { try LoudnessScanner.measure(tone, cancelled: { true }) }
    }
}
