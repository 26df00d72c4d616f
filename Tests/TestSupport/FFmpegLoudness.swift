import Foundation

/// ffmpeg's `ebur128` filter as an independent meter: the integrated loudness (LUFS) and true
/// peak (dBTP) of a file, or of 16-bit PCM written to a WAV file first.
public struct FFmpegLoudness: Sendable, CustomStringConvertible {
    public let integrated: Double
    public let truePeak: Double

    public var description: String { "\(integrated) LUFS, true peak \(truePeak) dBTP" }

    /// Measures the file at `url` (any format ffmpeg reads).
    public static func measure(_ url: URL) throws -> FFmpegLoudness {
        let run = try ToolRun.run("/usr/bin/ffmpeg", ["-nostats", "-hide_banner", "-i", url.path, "-af", "ebur128=peak=true",
                                                      "-f", "null", "-"], timeout: 120)
        guard run.status == 0 else { throw ChildProcessError("ffmpeg failed: \(run)") }
        // The summary at the end: "I:  -16.1 LUFS" and, under "True peak:", "Peak:  -1.2 dBFS".
        let lines = run.stderr.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let summary = lines.lastIndex(where: { $0.hasSuffix("Summary:") }) else { throw ChildProcessError("no summary: \(run)") }
        func value(_ prefix: String) -> Double? {
            lines[summary...].first { $0.hasPrefix(prefix) }.flatMap { line in
                Double(line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
            }
        }
        guard let integrated = value("I:"), let peak = value("Peak:") else { throw ChildProcessError("no figures: \(run)") }
        return FFmpegLoudness(integrated: integrated, truePeak: peak)
    }

    /// Measures interleaved signed 16-bit little-endian `pcm` at `rate` Hz and `channels`.
    public static func measure(pcm: Data, rate: Int = 44_100, channels: Int = 2, in directory: URL) throws -> FFmpegLoudness {
        let wav = directory.appendingPathComponent("measured-\(UUID().uuidString).wav")
        try waveFile(pcm: pcm, rate: rate, channels: channels).write(to: wav)
        defer { try? FileManager.default.removeItem(at: wav) }
        return try measure(wav)
    }

    /// A canonical 44-byte-header WAV file of `pcm`.
    public static func waveFile(pcm: Data, rate: Int, channels: Int) -> Data {
        var data = Data()
        func put32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { data.append(contentsOf: $0) } }
        func put16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8)); put32(36 + pcm.count)
        data.append(contentsOf: Array("WAVEfmt ".utf8)); put32(16); put16(1); put16(channels)
        put32(rate); put32(rate * channels * 2); put16(channels * 2); put16(16)
        data.append(contentsOf: Array("data".utf8)); put32(pcm.count)
        data.append(pcm)
        return data
    }

    /// The RMS level of 16-bit PCM in dB relative to full scale, for gain ratios finer than
    /// ffmpeg's 0.1 LU.
    public static func rmsDecibels(_ pcm: Data) -> Double {
        pcm.withUnsafeBytes { raw in
            let samples = raw.bindMemory(to: Int16.self)
            guard !samples.isEmpty else { return -.infinity }
            let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
            return 10 * log10(sum / Double(samples.count) / (32_768.0 * 32_768.0))
        }
    }
}
