import Foundation
import QueuePlayer
import Synchronization

/// The project's sample items, and fixtures made on demand for tests.
public enum TestMedia {
    /// The repository's root directory.
    public static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The repository's `Media/` directory.
    public static let directory = repository.appendingPathComponent("Media")

    /// `Tests/IntegrationTests`, whose `Scripts/` (the Python clients) and `Transcripts/` (mpd's
    /// replies) the tests of either target read.
    public static let integrationTests = repository.appendingPathComponent("Tests/IntegrationTests")

    /// Every `.mp3` in `Media/`, sorted by name.
    public static var all: [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".mp3") }.sorted().map { directory.appendingPathComponent($0) }
    }

    /// The 44.1 kHz stereo items.
    public static var stereo: [URL] { all.filter { !$0.lastPathComponent.contains("22k") } }

    /// The exact decoded length of `url`, in frames, as libmpg123 reports it.
    public static func frameCount(_ url: URL) throws -> Int64 {
        try MPG123Decoder(url: url).frameCount
    }

    /// The PCM of `url` decoded whole by the engine's file decoder (``MPG123Decoder``): what a
    /// stream of the same bytes must sound like, byte for byte.
    public static func decodedPCM(_ url: URL) throws -> Data {
        let decoder = try MPG123Decoder(url: url)
        var pcm = Data()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * decoder.format.bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let frames = try decoder.decode(into: buffer, maximumFrames: 4096)
            if frames == 0 { break }
            pcm.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<(frames * decoder.format.bytesPerFrame)]))
        }
        return pcm
    }

    /// Sets the access and modification times of the file at `path` (`utimensat`), to the nanosecond.
    public static func setModificationTime(_ path: String, seconds: Int, nanoseconds: Int) throws {
        var times = [timespec(tv_sec: seconds, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds)]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0 else { throw UnixSocketError("utimensat \(path): \(errno)") }
    }

    /// A scratch directory removed at process exit is not needed: each test makes its own.
    public static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("queueplayer-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Synthesizes a sine tone with sox and encodes it with lame (gapless tag included).
    public static func makeTone(seconds: Double, frequency: Int = 440, rate: Int = 44_100, channels: Int = 2, in directory: URL, name: String) throws -> URL {
        let wav = directory.appendingPathComponent("\(name).wav")
        let mp3 = directory.appendingPathComponent("\(name).mp3")
        try run("/usr/bin/sox", ["-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", wav.path, "synth", "\(seconds)", "sine", "\(frequency)", "vol", "0.5"])
        try run("/usr/bin/lame", ["--quiet", "-V", "4", wav.path, mp3.path])
        try FileManager.default.removeItem(at: wav)
        return mp3
    }

    /// `seconds` of silence, 8 kHz mono at 8 kb/s (sox, lame): a long item made and decoded in
    /// moments (11 minutes in about a second).
    public static func makeSilence(seconds: Int, in directory: URL, name: String) throws -> URL {
        let wav = directory.appendingPathComponent("\(name).wav")
        let mp3 = directory.appendingPathComponent("\(name).mp3")
        try run("/usr/bin/sox", ["-n", "-r", "8000", "-c", "1", "-b", "16", wav.path, "trim", "0", "\(seconds)"])
        try run("/usr/bin/lame", ["--quiet", "-b", "8", wav.path, mp3.path])
        try FileManager.default.removeItem(at: wav)
        return mp3
    }

    /// Runs a program to its end and fails if it exits non-zero.
    public static func run(_ path: String, _ arguments: [String]) throws {
        let child = try ChildProcess(program: path, arguments)
        guard let status = child.wait(timeout: 120) else {
            child.terminate()
            throw ChildProcessError("\(path) did not finish")
        }
        guard status == 0 else {
            throw ChildProcessError("\(path) \(arguments.joined(separator: " ")) exited \(status): \(child.standardError)")
        }
    }
}

/// A value several threads append to, for collecting observations.
public final class Recorder<Value: Sendable>: Sendable {
    public init() {}
    private let values = Mutex<[Value]>([])
    public func append(_ value: Value) { values.withLock { $0.append(value) } }
    public var all: [Value] { values.withLock { $0 } }
}
