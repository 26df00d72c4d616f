import Foundation
import QueuePlayer
import TestSupport
import Testing

/// Files with a few bytes flipped (as a bad disk or download leaves them) play as far as
/// libmpg123 can decode them, which it does by resyncing past the damaged frames; only
/// what it cannot decode at all fails, and an item that fails to open never becomes current.
@Suite struct DamagedFileTests {
    /// Frames the engine's decoder gives for `url`: 0 if it refuses the file.
    static func engineFrames(_ url: URL) -> Int64 {
        guard let decoder = try? MPG123Decoder(url: url) else { return 0 }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * decoder.format.bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while let frames = try? decoder.decode(into: buffer, maximumFrames: 4096), frames > 0 { total += Int64(frames) }
        return total
    }

    /// Frames the real `mpg123 -w` writes for `url` (0 if it writes no WAV file).
    static func mpg123Frames(_ url: URL, in directory: URL) throws -> Int64 {
        let wav = directory.appendingPathComponent(url.deletingPathExtension().lastPathComponent + ".wav")
        let decoder = try ChildProcess(program: "/usr/bin/mpg123", ["-q", "-w", wav.path, url.path])
        _ = decoder.wait(timeout: 60)
        guard let data = try? Data(contentsOf: wav), data.count > 44 else { return 0 }
        let channels = Int64(data[22]) | Int64(data[23]) << 8
        // The data chunk is the last one mpg123 writes; its size field is at 40 for a plain header.
        let size = data[40..<44].enumerated().reduce(Int64(0)) { $0 | Int64($1.element) << (8 * Int64($1.offset)) }
        return min(size, Int64(data.count - 44)) / (2 * channels)
    }

    @Test func lightlyDamagedFilesPlayAtLeastWhatMpg123Decodes() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sources = TestMedia.all
        try #require(!sources.isEmpty)
        var damage = SplitMix64(seed: 20_261_123)
        var refused: [String] = []
        var short: [String] = []
        var decodedByMPG123 = 0
        let count = 100
        for index in 0..<count {
            let source = sources[index % sources.count]
            // From 0.01 % to 1 % of the bytes, evenly on a log scale.
            let fraction = 0.0001 * pow(100, Double(index / sources.count) / Double((count - 1) / sources.count))
            let url = directory.appendingPathComponent(String(format: "damaged-%02d.mp3", index))
            try damage.flip(Data(contentsOf: source), fraction: fraction).write(to: url)
            let reference = try Self.mpg123Frames(url, in: directory)
            let engine = Self.engineFrames(url)
            let name = "\(url.lastPathComponent) (\(source.lastPathComponent), \(fraction * 100) %): engine \(engine), mpg123 \(reference) frames"
            if reference > 0 { decodedByMPG123 += 1 }
            if engine == 0 && reference > 0 { refused.append(name) }
            if engine < reference { short.append(name) }
        }
        print("damaged files: \(count), mpg123 decodes \(decodedByMPG123), the engine refuses \(refused.count) of those, decodes less than mpg123 \(short.count)")
        #expect(decodedByMPG123 >= count / 2, "the damage is meant to be light: mpg123 decodes only \(decodedByMPG123) of \(count)")
        #expect(refused.isEmpty, "refused what mpg123 decodes: \(refused)")
        #expect(short.isEmpty, "decoded less than mpg123: \(short)")
    }

    @Test func whatCannotBeDecodedStillFailsCleanly() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var damage = SplitMix64(seed: 7)
        // Every byte damaged: nothing of MPEG audio is left.
        let ruined = directory.appendingPathComponent("ruined.mp3")
        let source = try #require(TestMedia.stereo.first)
        var bytes = [UInt8](try Data(contentsOf: source))
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &damage) }
        try Data(bytes).write(to: ruined)
        #expect(try Self.mpg123Frames(ruined, in: directory) == 0, "mpg123 decodes nothing of it either")
        #expect(throws: DecoderError.self) { try MPG123Decoder(url: ruined) }

        let player = QueuePlayer(items: [], sink: NullAudioSink(clock: VirtualClock()))
        let announced = Recorder<PlayerItem?>()
        let observation = player.observe(\.currentItem, options: [.new]) { _, change in announced.append(change.newValue ?? nil) }
        defer { observation.invalidate() }
        let bad = PlayerItem(url: ruined)
        let good = PlayerItem(url: source)
        player.insert(bad, after: nil)
        player.insert(good, after: nil)
        #expect(bad.status == .failed)
        #expect(player.items() == [good])
        #expect(announced.all.compactMap { $0 }.allSatisfy { $0 != bad }, "an item that failed to open was announced as current: \(announced.all)")
        #expect(player.currentItem == good)

        // The daemon announces only what plays.
        let tone = try TestMedia.makeTone(seconds: 0.5, in: directory, name: "short")
        let daemon = try InProcessDaemon {
            $0.once = true
            $0.files = [ruined.path, tone.path]
        }
        defer { daemon.stop() }
        #expect(daemon.waitForEnd(timeout: 10) == true, "\(daemon.standardError)")
        #expect(daemon.lines.map(\.text) == ["Now playing: short.mp3"])
        #expect(daemon.standardError.contains("ruined.mp3"), "the failure is logged: \(daemon.standardError)")
    }
}

extension SplitMix64 {
    /// `data` with `fraction` of its bytes each given one flipped bit: the same bytes every run.
    mutating func flip(_ data: Data, fraction: Double) -> Data {
        var bytes = [UInt8](data)
        for _ in 0..<max(1, Int(Double(bytes.count) * fraction)) {
            let index = Int.random(in: 0..<bytes.count, using: &self)
            bytes[index] ^= 1 << UInt8.random(in: 0..<8, using: &self)
        }
        return Data(bytes)
    }
}
