#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import QueuePlayer
import Synchronization

/// Measures a file's loudness: decodes it with libmpg123 (``MPG123Decoder``, the 16-bit PCM
/// the player itself plays) into a ``LoudnessMeter``, 64 KiB at a time.
///
/// Blocking and CPU-bound (an hour of audio takes seconds): call it off any event loop, on a
/// queue of background work. `cancelled` is checked between chunks, so a background task that
/// expires stops it within one chunk.
public enum LoudnessScanner {
    public enum Failure: Error, Sendable, Equatable {
        case decoder(String)
        case cancelled
        case unsupportedFormat
    }

    /// The measurement of the file at `url`.
    public static func measure(_ url: URL, cancelled: @Sendable () -> Bool = { false }) throws(Failure) -> LoudnessMeasurement {
        let decoder: MPG123Decoder
        do {
            decoder = try MPG123Decoder(url: url)
        } catch {
            throw .decoder(error.description)
        }
        guard let meter = LoudnessMeter(format: decoder.format) else { throw .unsupportedFormat }
        let framesPerChunk = 16_384
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: framesPerChunk * decoder.format.bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            if cancelled() { throw .cancelled }
            let frames: Int
            do {
                frames = try decoder.decode(into: buffer, maximumFrames: framesPerChunk)
            } catch {
                throw .decoder(error.description)
            }
            if frames == 0 { break }
            meter.add(buffer.baseAddress!.assumingMemoryBound(to: Int16.self), frameCount: frames)
        }
        return LoudnessMeasurement(integrated: meter.integratedLoudness, truePeak: meter.truePeak)
    }
}
