import CMPG123
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Decodes an MP3 stream that arrives over the network, with libmpg123's feed API
/// (`mpg123_open_feed`, `mpg123_feed`), reading its bytes from a ``StreamSource``'s
/// ``StreamBuffer`` on the render thread without waiting.
///
/// Nothing is read when it is made (the control queue or the look-ahead queue makes it and
/// must not wait on the network): the format, the length and the byte rate are learnt on
/// the render thread from the first frames (``availability(waitingToMinimizeStalls:)``), and
/// until then the decoder is ``DecoderAvailability/buffering``. A decode that runs out of
/// bytes before the end returns what it has and sets ``isStarved``: the render thread waits
/// (``willWaitForData()``), the transport's next bytes wake it. Gapless as a file: libmpg123
/// reads the LAME tag from the feed and trims the encoder delay and padding.
///
/// A seek (``seek(toFrame:)``: the render thread's, on a decoder handed over to start at a
/// frame) waits for the first frame's header, then asks libmpg123 where that frame's bytes
/// are (`mpg123_feedseek`, fuzzy: from the Xing table or the byte rate and the resource's
/// length) and the transport for those bytes (a range request). A live stream's audio that
/// waited in a full buffer for longer than ``staleAfter`` (a pause) is dropped, and the
/// transport asked for the live edge.
///
/// Owner: one thread at a time (the opener, then the render thread), as ``MPG123Decoder``'s,
/// checked in debug builds (`inUse`); the buffer's consumer side is that thread's.
public final class MPG123StreamDecoder: Decoder, @unchecked Sendable {
    private let handle: OpaquePointer
    private let inUse = Atomic<Bool>(false)
    private let url: URL
    private let source: any StreamSource
    private let buffer: StreamBuffer
    private let outputFormat: AudioFormat?
    /// Bytes taken from the ring and fed to libmpg123 in one go.
    private let input: UnsafeMutableRawPointer
    private static let inputSize = 4096
    private var deferredError: DecoderError?
    private var formatKnown = false
    private var pendingSeek: Int64?
    /// The item frame the next decoded frame has (for the buffer's loaded range).
    private var frame: Int64 = 0

    /// A live stream's audio that waited this long in a full buffer is stale: dropped for the live edge.
    public static let staleAfter: UInt64 = 2_000_000_000

    public private(set) var format: AudioFormat
    public private(set) var knownFrameCount: Int64?
    public var frameCount: Int64 { knownFrameCount ?? 0 }
    public let metadata = ItemMetadata()
    public private(set) var isStarved = false
    public var streamSource: (any StreamSource)? { source }
    public var isStreaming: Bool { true }

    /// A decoder of `source`'s bytes, to `outputFormat` if given (else the stream's own format,
    /// learnt from its first frame). Starts the source.
    public init(source: any StreamSource, outputFormat: AudioFormat? = nil) throws(DecoderError) {
        url = source.url
        self.source = source
        buffer = source.buffer
        self.outputFormat = outputFormat
        format = outputFormat ?? AudioFormat(sampleRate: 44_100, channelCount: 2)
        let handle = try MPG123Decoder.makeHandle(url: url, outputFormat: outputFormat,
                                                  flags: Int(MPG123_GAPLESS.rawValue | MPG123_QUIET.rawValue | MPG123_FUZZY.rawValue))
        self.handle = handle
        // Fed buffers come from a pool made at open: feeding allocates nothing once it is warm.
        mpg123_param2(handle, Int32(MPG123_FEEDPOOL.rawValue), 16, 0)
        mpg123_param2(handle, Int32(MPG123_FEEDBUFFER.rawValue), Self.inputSize, 0)
        guard mpg123_open_feed(handle) == MPG123_OK.rawValue else {
            let why = String(cString: mpg123_strerror(handle))
            mpg123_delete(handle)
            throw DecoderError(url: url, reason: .unreadable(why))
        }
        input = .allocate(byteCount: Self.inputSize, alignment: 16)
        source.start()
    }

    deinit {
        source.close()
        mpg123_close(handle)
        mpg123_delete(handle)
        input.deallocate()
    }

    // MARK: - The render thread's calls

    public func availability(waitingToMinimizeStalls: Bool) -> DecoderAvailability {
        #if DEBUG
        assert(!inUse.exchange(true, ordering: .acquiring), "a decoder used by two threads at once")
        defer { inUse.store(false, ordering: .releasing) }
        #endif
        if deferredError != nil || buffer.error != nil { return .ready }
        if !formatKnown {
            guard learnFormat() else { return deferredError != nil || buffer.hasEnded ? .ready : .buffering }
        }
        if let target = pendingSeek {
            pendingSeek = nil
            var offset: off_t = 0
            let reached = mpg123_feedseek(handle, off_t(target), SEEK_SET, &offset)
            if reached >= 0 {
                frame = Int64(reached)
                buffer.requestRestart(at: Int64(offset))
            }
            return .buffering
        }
        if buffer.isLive, buffer.fullFor() > Self.staleAfter {
            // Paused longer than the buffer: what it holds is minutes old. The live edge instead.
            buffer.discardBuffered()
            buffer.requestRestart(at: nil)
            return .buffering
        }
        if buffer.hasEnded { return .ready }
        if waitingToMinimizeStalls {
            return isLikelyToKeepUp ? .ready : .buffering
        }
        return buffer.bufferedBytes > 0 || !isStarved ? .ready : .buffering
    }

    /// True when the buffer holds enough to play on without stalling soon: ``keepUpSeconds``
    /// of audio, or all it may hold, or the rest of the resource.
    public var isLikelyToKeepUp: Bool {
        buffer.hasEnded || buffer.isFull || buffer.bufferedSeconds >= Self.keepUpSeconds
    }

    /// Seconds of audio buffered before a stream starts or resumes after a stall.
    public static let keepUpSeconds = 2.0

    public func willWaitForData() -> Bool {
        let rate = buffer.bytesPerSecond
        let wanted = rate > 0 ? Int(Double(rate) * Self.keepUpSeconds) : 1
        return buffer.consumerWillWait(forBytes: wanted)
    }

    public func decode(into output: UnsafeMutableRawBufferPointer, maximumFrames: Int) throws(DecoderError) -> Int {
        #if DEBUG
        assert(!inUse.exchange(true, ordering: .acquiring), "a decoder used by two threads at once")
        defer { inUse.store(false, ordering: .releasing) }
        #endif
        if let error = deferredError { throw error }
        isStarved = false
        let bytesPerFrame = format.bytesPerFrame
        let wanted = min(maximumFrames * bytesPerFrame, output.count - output.count % bytesPerFrame)
        var filled = 0
        while filled < wanted {
            var done = 0
            let result = mpg123_read(handle, output.baseAddress! + filled, wanted - filled, &done)
            filled += done
            switch result {
            case MPG123_OK.rawValue:
                continue
            case MPG123_DONE.rawValue:
                return finish(filled / bytesPerFrame)
            case MPG123_NEW_FORMAT.rawValue:
                var rate = 0, channels: Int32 = 0, encoding: Int32 = 0
                mpg123_getformat(handle, &rate, &channels, &encoding)
                if rate != format.sampleRate || Int(channels) != format.channelCount {
                    throw DecoderError(url: url, reason: .formatChange)
                }
            case MPG123_NEED_MORE.rawValue:
                if feed() { continue }
                if let error = buffer.error {
                    if filled < bytesPerFrame { throw error }
                    deferredError = error
                    return finish(filled / bytesPerFrame)
                }
                if !buffer.hasEnded { isStarved = true }
                return finish(filled / bytesPerFrame)
            default:
                let error = DecoderError(url: url, reason: .corrupt(MPG123Decoder.lastError(handle, fallback: "decoding failed")))
                if filled < bytesPerFrame { throw error }
                deferredError = error
                return finish(filled / bytesPerFrame)
            }
        }
        return finish(filled / bytesPerFrame)
    }

    public func seek(toFrame target: Int64) throws(DecoderError) {
        #if DEBUG
        assert(!inUse.exchange(true, ordering: .acquiring), "a decoder used by two threads at once")
        defer { inUse.store(false, ordering: .releasing) }
        #endif
        deferredError = nil
        guard target > 0 else { return }
        pendingSeek = target
    }

    // MARK: - Private

    private func finish(_ frames: Int) -> Int {
        frame += Int64(frames)
        buffer.setDecodedFrame(frame, sampleRate: format.sampleRate)
        return frames
    }

    /// Moves the ring's next bytes into libmpg123; false if there were none.
    private func feed() -> Bool {
        let count = buffer.read(into: input, count: Self.inputSize)
        guard count > 0 else { return false }
        mpg123_feed(handle, input.assumingMemoryBound(to: UInt8.self), count)
        return true
    }

    /// The stream's bytes per second: the resource's length over its duration when both are
    /// known (a VBR file's Xing tag gives the duration), else the first frame's bit rate.
    private func byteRate(sampleRate: Int) -> Int {
        if let frames = knownFrameCount, frames > 0, let length = buffer.resourceLength, length > 0 {
            return Int(length * Int64(sampleRate) / frames)
        }
        var info = mpg123_frameinfo2()
        guard mpg123_info2(handle, &info) == MPG123_OK.rawValue else { return 16_000 }
        let kbps = info.vbr == Int32(MPG123_ABR.rawValue) ? Int(info.abr_rate) : Int(info.bitrate)
        return kbps > 0 ? kbps * 125 : 16_000
    }

    /// Feeds bytes until libmpg123 has parsed the first frame; true once the format is known.
    private func learnFormat() -> Bool {
        if buffer.consumedBytes == 0, buffer.isLive {
            // A live stream has no end to trim, and a LAME/Xing frame in it (a source that
            // restarted, a playlist of files) is not its length: decode it all as it comes.
            mpg123_param2(handle, Int32(MPG123_REMOVE_FLAGS.rawValue), Int(MPG123_GAPLESS.rawValue), 0)
            mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_IGNORE_INFOFRAME.rawValue), 0)
        }
        while true {
            var rate = 0, channels: Int32 = 0, encoding: Int32 = 0
            let result = mpg123_getformat(handle, &rate, &channels, &encoding)
            if result == MPG123_OK.rawValue, rate > 0, channels > 0 {
                format = outputFormat ?? AudioFormat(sampleRate: rate, channelCount: Int(channels))
                mpg123_format_none(handle)
                mpg123_format(handle, format.sampleRate, MPG123Decoder.layout(format.channelCount), Int32(MPG123_ENC_SIGNED_16.rawValue))
                if let length = buffer.resourceLength { mpg123_set_filesize(handle, off_t(length)) }
                if !buffer.isLive {
                    let length = mpg123_length(handle)
                    knownFrameCount = length > 0 ? Int64(length) : nil
                }
                buffer.setBytesPerSecond(byteRate(sampleRate: rate))
                formatKnown = true
                return true
            }
            if result != MPG123_NEED_MORE.rawValue && result != MPG123_OK.rawValue {
                deferredError = DecoderError(url: url, reason: .notMPEGAudio(MPG123Decoder.lastError(handle, fallback: "no MPEG audio frame found")))
                return false
            }
            // More than a buffer's worth of bytes without a frame header: not MP3.
            if buffer.consumedBytes > 256 * 1024 {
                deferredError = DecoderError(url: url, reason: .notMPEGAudio("no MPEG audio frame in its first 256 KiB"))
                return false
            }
            if !feed() {
                if buffer.hasEnded {
                    deferredError = DecoderError(url: url, reason: buffer.consumedBytes == 0 ? .empty : .notMPEGAudio("no MPEG audio frame found"))
                }
                return false
            }
        }
    }
}
