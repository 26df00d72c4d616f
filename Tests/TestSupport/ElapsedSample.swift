import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The FIFO output tests' reader and checks: a tick, a second of audio, a `cat` into a file.
public enum FIFOCapture {
    /// One tick: a render chunk, 1,024 frames at 44.1 kHz (the FIFO sink writes, and tries to
    /// open the pipe again, at least this often).
    public static let tick = 1024.0 / 44_100
    /// Bytes of one second of 44.1 kHz 16-bit stereo.
    public static let bytesPerSecond = 44_100 * 4

    public static func reader(_ fifo: String, into file: URL) throws -> ChildProcess {
        try ChildProcess(program: "/bin/sh", ["-c", "exec cat '\(fifo)' > '\(file.path)'"])
    }

    public static func size(_ url: URL) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
    }

    /// True if `capture` is a frame-aligned run of `reference`, byte for byte.
    public static func isContiguous(_ capture: Data, in reference: Data) -> Bool {
        guard capture.count >= 4096, let start = PieceLocator.start(of: capture, in: reference) else { return false }
        return start + capture.count <= reference.count && reference[start..<(start + capture.count)] == capture
    }
}

/// One `status`: the song, state and elapsed time, and when it was asked and answered.
public struct ElapsedSample: CustomStringConvertible {
    public let song: String?
    public let state: String?
    public let elapsed: Double
    public let sent: Double
    public let received: Double
    /// The moment `elapsed` was taken, within half a round trip.
    public var time: Double { (sent + received) / 2 }

    public init(_ client: UnixSocketClient) throws {
        sent = ChildProcess.now()
        let reply = try client.request("status")
        received = ChildProcess.now()
        song = replyValue(reply, "song")
        state = replyValue(reply, "state")
        elapsed = replyValue(reply, "elapsed").flatMap(Double.init) ?? -1
    }

    /// The first sample asked for after `time` (monotonic seconds), polling every 50 ms.
    public static func first(_ client: UnixSocketClient, after time: Double) throws -> ElapsedSample {
        var sample = try ElapsedSample(client)
        while sample.sent < time {
            var none = pollfd()
            _ = poll(&none, 0, 50)
            sample = try ElapsedSample(client)
        }
        return sample
    }

    public var description: String { "song \(song ?? "-") \(state ?? "-") elapsed \(elapsed) at \(time)" }
}

/// The stream's offset, `elapsed` minus the monotonic time, from the `status` replies with the
/// shortest round trips among several: constant while playback runs at the clock's pace.
public struct StreamOffset: CustomStringConvertible {
    public let value: Double
    /// Half the longest round trip of the samples used, plus `elapsed`'s millisecond rounding.
    public let uncertainty: Double

    public init(_ client: UnixSocketClient, samples: Int = 12) throws {
        var all: [ElapsedSample] = []
        for _ in 0..<samples {
            all.append(try ElapsedSample(client))
            var none = pollfd()
            _ = poll(&none, 0, 10)
        }
        let best = all.sorted { $0.received - $0.sent < $1.received - $1.sent }.prefix(3)
        value = best.map { $0.elapsed - $0.time }.reduce(0, +) / Double(best.count)
        uncertainty = (best.map { $0.received - $0.sent }.max() ?? 0) / 2 + 0.0005
    }

    public var description: String { String(format: "offset %.4f s ± %.4f", value, uncertainty) }
}
