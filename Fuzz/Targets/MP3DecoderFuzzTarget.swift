import Foundation
import QueuePlayer
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A file added to the queue, through ``MPG123Decoder``: opened (scanned, tags read),
/// decoded to the end, and sought to the start, the middle, the end and beyond.
///
/// The decoder reads files by path, so each input is written to a file of its own
/// (a new file, so the scan cache never answers for an earlier input). Properties:
/// an accepted file has a format the output can play and a positive length; no call
/// returns more frames than asked for; and a refused file comes with a reason.
enum MP3DecoderFuzzTarget {
    /// Where the inputs are written: memory if the machine has it.
    private static let directory = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    private static let counter = Counter()

    static func run(_ input: UnsafeRawBufferPointer) throws(FuzzFinding) {
        let path = "\(directory)/queueplayerd-fuzz-\(getpid())-\(counter.next()).mp3"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try FuzzFinding.require(fd >= 0, "cannot create \(path)")
        let written = input.isEmpty ? 0 : write(fd, input.baseAddress, input.count)
        close(fd)
        defer { unlink(path) }
        try FuzzFinding.require(written == input.count, "cannot write \(path)")

        let decoder: MPG123Decoder
        do {
            decoder = try MPG123Decoder(url: URL(fileURLWithPath: path))
        } catch {
            return try FuzzFinding.require(!error.description.isEmpty, "a refusal without a reason")
        }
        let format = decoder.format
        try FuzzFinding.require((8_000...48_000).contains(format.sampleRate) && (1...2).contains(format.channelCount),
                                "accepted format \(format)")
        try FuzzFinding.require(decoder.frameCount > 0, "accepted a length of \(decoder.frameCount) frames")
        _ = decoder.metadata
        _ = decoder.bitRate

        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1152 * 4 * 4, alignment: 16)
        defer { buffer.deallocate() }
        let maximumFrames = buffer.count / format.bytesPerFrame
        // Everything, bounded: a scan that found N frames cannot decode to much more.
        var decoded: Int64 = 0
        while decoded <= decoder.frameCount + Int64(maximumFrames) {
            guard let frames = try decode(decoder, into: buffer, maximumFrames: maximumFrames) else { break }
            if frames == 0 { break }
            decoded += Int64(frames)
        }
        try FuzzFinding.require(decoded <= decoder.frameCount + Int64(maximumFrames),
                                "decoded more than \(decoded) frames of a scanned length of \(decoder.frameCount)")

        for target in [0, decoder.frameCount / 2, decoder.frameCount - 1, decoder.frameCount, decoder.frameCount + 4_608] {
            do {
                try decoder.seek(toFrame: target)
            } catch {
                continue
            }
            _ = try decode(decoder, into: buffer, maximumFrames: 1152)
        }
    }

    /// One decode call: the frames produced, or nil for a decoding error (a corrupt file may have one).
    private static func decode(_ decoder: MPG123Decoder, into buffer: UnsafeMutableRawBufferPointer,
                               maximumFrames: Int) throws(FuzzFinding) -> Int? {
        let frames: Int
        do {
            frames = try decoder.decode(into: buffer, maximumFrames: maximumFrames)
        } catch {
            return nil
        }
        try FuzzFinding.require((0...maximumFrames).contains(frames), "decode returned \(frames) of at most \(maximumFrames) frames")
        return frames
    }

    /// Numbers the scratch files, so that parallel test runs in one process do not collide.
    private final class Counter: Sendable {
        private let value = Atomic<Int>(0)
        func next() -> Int { value.add(1, ordering: .relaxed).newValue }
    }
}
