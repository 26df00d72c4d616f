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

/// Decodes MPEG audio (MP3) files with libmpg123, gapless.
///
/// libmpg123's gapless mode removes the encoder delay and padding that the
/// LAME/Xing tag records, so consecutive items join sample for sample. Output
/// is always signed 16-bit at the stream's own rate and channel count.
/// Opening scans the whole file once, which gives the exact length and detects
/// truncation up front; the result is remembered per file (device, inode, size,
/// modification time), so the same unchanged file is scanned once per process.
/// With an output format (an output that takes one fixed format, such as a FIFO), every
/// item decodes to that rate and channel count instead: libmpg123 resamples (its NtoM or
/// 2:1/4:1 synthesis) and duplicates or mixes channels, and its gapless trimming still
/// applies, to the resampled length, so items still join sample for sample.
/// A damaged file (some bytes wrong, none missing) is not refused: libmpg123 resyncs
/// past the frames it cannot decode, and the item plays what it can, as `mpg123` does.
/// libmpg123 reads through ``BufferedFile``: one `pread` per 64 KiB instead of
/// two `read`s per MPEG frame.
///
/// Owner: one thread at a time (the opener, then a player's render thread it is handed to)
/// holds the libmpg123 handle and the deferred error, checked in debug builds (`inUse`);
/// everything else is immutable.
public final class MPG123Decoder: Decoder, @unchecked Sendable {
    private let handle: OpaquePointer
    /// Set while a thread decodes or seeks: a debug build checks that no other comes in then.
    private let inUse = Atomic<Bool>(false)
    private let file: BufferedFile
    private let url: URL
    /// A decoding error that came after frames the last ``decode(into:maximumFrames:)`` returned.
    private var deferredError: DecoderError?

    public let format: AudioFormat
    public let frameCount: Int64
    public let metadata: ItemMetadata
    /// Every ID3 text frame of the file, for whoever presents tags beyond ``metadata``.
    public let id3: ID3Tags
    /// The file's ReplayGain: its `TXXX` tags, else the `RVA2` frame or LAME header libmpg123
    /// read (gains only: libmpg123 does not say their peaks, and a gain of exactly 0 dB is
    /// taken for none).
    public let replayGain: ReplayGainInfo?

    /// The stream's nominal bit rate in kbit/s (an average for VBR), if known.
    public let bitRate: Int?

    /// Opens and scans the file at `url` (or takes the scan of the same unchanged file from before);
    /// with `outputFormat`, decodes to that rate and channel count whatever the file's are.
    public init(url: URL, outputFormat: AudioFormat? = nil) throws(DecoderError) {
        self.url = url
        let file = try Self.openFile(url)
        self.file = file
        let handle = try Self.makeHandle(url: url, outputFormat: outputFormat, flags: Int(MPG123_GAPLESS.rawValue | MPG123_QUIET.rawValue))
        self.handle = handle
        var opened = false
        defer { if !opened { mpg123_delete(handle) } }
        mpg123_replace_reader_handle(handle, BufferedFile.read, BufferedFile.seek, nil)

        guard file.open(handle) else {
            throw DecoderError(url: url, reason: .unreadable(String(cString: mpg123_strerror(handle))))
        }
        defer { if !opened { mpg123_close(handle) } }

        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue, rate > 0, channels > 0 else {
            throw DecoderError(url: url, reason: .notMPEGAudio(Self.lastError(handle, fallback: "no MPEG audio frame found")))
        }
        format = AudioFormat(sampleRate: rate, channelCount: Int(channels))
        // From now on only this format: a damaged frame whose header claims another rate or
        // channel count is converted to it (as libmpg123 does for any stream), instead of
        // ending the item with a format change that no real stream of a file makes.
        mpg123_format_none(handle)
        mpg123_format(handle, rate, Self.layout(Int(channels)), Int32(MPG123_ENC_SIGNED_16.rawValue))

        let scan: ScanResult
        let scans = Self.scans(for: outputFormat)
        if let known = scans.result(for: file.identity) {
            scan = known
        } else {
            // The length the LAME/Xing tag announces, before scanning replaces it with the real one.
            var delay = -1
            var unused = 0.0
            mpg123_getstate2(handle, Int32(MPG123_ENC_DELAY.rawValue), &delay, &unused)
            let announced: Int64? = delay >= 0 ? Int64(mpg123_length(handle)) : nil
            guard mpg123_scan(handle) == MPG123_OK.rawValue else {
                throw DecoderError(url: url, reason: .corrupt(Self.lastError(handle, fallback: "scan failed")))
            }
            scan = ScanResult(length: Int64(mpg123_length(handle)), announced: announced)
            scans.remember(scan, for: file.identity)
            // Scanning leaves the decoder positioned by a seek, and a seek primes the synthesis
            // from earlier frames: reopen so the first samples are exactly those of a plain decode.
            mpg123_close(handle)
            guard file.open(handle), mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue else {
                throw DecoderError(url: url, reason: .unreadable(String(cString: mpg123_strerror(handle))))
            }
        }
        guard scan.length > 0 else {
            throw DecoderError(url: url, reason: .notMPEGAudio("no decodable audio"))
        }
        if let announced = scan.announced, announced > 0, scan.length < announced,
           let tag = XingTag.streamSize(read: file.read(at:count:)),
           XingTag.isCutOff(fileSize: file.identity.size, tag: tag, frames: scan.length, announcedFrames: announced) {
            throw DecoderError(url: url, reason: .truncated(decodedFrames: scan.length, announcedFrames: announced))
        }
        frameCount = scan.length

        var info = mpg123_frameinfo2()
        if mpg123_info2(handle, &info) == MPG123_OK.rawValue {
            let vbr = info.vbr == Int32(MPG123_CBR.rawValue) ? Int(info.bitrate) : Int(info.abr_rate)
            bitRate = vbr > 0 ? vbr : Int(info.bitrate)
        } else {
            bitRate = nil
        }
        id3 = ID3Tags.read(handle)
        metadata = ItemMetadata(id3)
        replayGain = ReplayGainInfo(id3) ?? Self.libraryGain(handle)
        opened = true
    }

    /// The track and album gains libmpg123 found itself (`MPG123_RVA` and `mpg123_getvolume`),
    /// its own scaling left off again (the output stays what the file decodes to).
    private static func libraryGain(_ handle: OpaquePointer) -> ReplayGainInfo? {
        func gain(_ choice: mpg123_param_rva) -> Double? {
            var decibels = 0.0
            guard mpg123_param2(handle, Int32(MPG123_RVA.rawValue), Int(choice.rawValue), 0) == MPG123_OK.rawValue,
                  mpg123_getvolume(handle, nil, nil, &decibels) == MPG123_OK.rawValue,
                  decibels != 0, decibels.isFinite else { return nil }
            return decibels
        }
        let track = gain(MPG123_RVA_MIX)
        let album = gain(MPG123_RVA_ALBUM)
        mpg123_param2(handle, Int32(MPG123_RVA.rawValue), Int(MPG123_RVA_OFF.rawValue), 0)
        guard track != nil || album != nil else { return nil }
        return ReplayGainInfo(trackGain: track, albumGain: album)
    }

    deinit {
        mpg123_close(handle)
        mpg123_delete(handle)
        // `file` closes its descriptor when released, after the handle that reads it.
    }

    public func decode(into buffer: UnsafeMutableRawBufferPointer, maximumFrames: Int) throws(DecoderError) -> Int {
        #if DEBUG
        assert(!inUse.exchange(true, ordering: .acquiring), "a decoder used by two threads at once")
        defer { inUse.store(false, ordering: .releasing) }
        #endif
        if let error = deferredError { throw error }
        let bytesPerFrame = format.bytesPerFrame
        let wanted = min(maximumFrames * bytesPerFrame, buffer.count - buffer.count % bytesPerFrame)
        var filled = 0
        while filled < wanted {
            var done = 0
            let result = mpg123_read(handle, buffer.baseAddress! + filled, wanted - filled, &done)
            filled += done
            switch result {
            case MPG123_OK.rawValue:
                continue
            case MPG123_DONE.rawValue:
                return filled / bytesPerFrame
            case MPG123_NEW_FORMAT.rawValue:
                var rate = 0, channels: Int32 = 0, encoding: Int32 = 0
                mpg123_getformat(handle, &rate, &channels, &encoding)
                if rate != format.sampleRate || Int(channels) != format.channelCount {
                    throw DecoderError(url: url, reason: .formatChange)
                }
            default:
                // libmpg123 resyncs past damaged frames by itself; an error here means it gave up.
                // What it decoded before is still played: the error comes with the next call.
                let error = DecoderError(url: url, reason: .corrupt(Self.lastError(handle, fallback: "decoding failed")))
                if filled < bytesPerFrame { throw error }
                deferredError = error
                return filled / bytesPerFrame
            }
        }
        return filled / bytesPerFrame
    }

    public func seek(toFrame frame: Int64) throws(DecoderError) {
        #if DEBUG
        assert(!inUse.exchange(true, ordering: .acquiring), "a decoder used by two threads at once")
        defer { inUse.store(false, ordering: .releasing) }
        #endif
        deferredError = nil
        if mpg123_seek(handle, off_t(frame), SEEK_SET) < 0 {
            throw DecoderError(url: url, reason: .corrupt("cannot seek: \(Self.lastError(handle, fallback: "seek failed"))"))
        }
    }

    // MARK: - Private

    static let initializeLibrary: Void = { _ = mpg123_init() }()

    /// A new libmpg123 handle with `flags` added, taking 16-bit output in `outputFormat`, or at
    /// any MPEG rate in mono or stereo when nil. Shared with ``MPG123StreamDecoder``.
    static func makeHandle(url: URL, outputFormat: AudioFormat?, flags: Int) throws(DecoderError) -> OpaquePointer {
        initializeLibrary
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else {
            throw DecoderError(url: url, reason: .unreadable("libmpg123: \(String(cString: mpg123_plain_strerror(error)))"))
        }
        mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), flags, 0)
        mpg123_format_none(handle)
        if let outputFormat {
            mpg123_format(handle, outputFormat.sampleRate, layout(outputFormat.channelCount), Int32(MPG123_ENC_SIGNED_16.rawValue))
        } else {
            var rates: UnsafePointer<Int>?
            var rateCount = 0
            mpg123_rates(&rates, &rateCount)
            for index in 0..<rateCount {
                mpg123_format(handle, rates![index], Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue), Int32(MPG123_ENC_SIGNED_16.rawValue))
            }
        }
        return handle
    }

    static func layout(_ channels: Int) -> Int32 {
        Int32(channels == 1 ? MPG123_MONO.rawValue : MPG123_STEREO.rawValue)
    }

    /// True if libmpg123 can decode to `rate` (one of the MPEG rates; `outputFormat`'s check).
    public static func canDecode(to format: AudioFormat) -> Bool {
        guard format.channelCount == 1 || format.channelCount == 2 else { return false }
        var rates: UnsafePointer<Int>?
        var rateCount = 0
        mpg123_rates(&rates, &rateCount)
        return (0..<rateCount).contains { rates![$0] == format.sampleRate }
    }

    /// Opens the file for reading, refusing what cannot be an MP3 item with a precise reason.
    private static func openFile(_ url: URL) throws(DecoderError) -> BufferedFile {
        let file = try BufferedFile.open(url)
        // libmpg123 skips junk to find a frame, which makes it "play" the PCM of a RIFF/WAVE file as noise.
        if let header = file.prefix(22), header.count == 22, header[0..<4].elementsEqual("RIFF".utf8),
           header[8..<12].elementsEqual("WAVE".utf8), header[12..<16].elementsEqual("fmt ".utf8),
           header[20] != 0x55 || header[21] != 0 {
            // Format tag 0x0055 would be MPEG Layer III inside RIFF, which libmpg123 plays; anything else is not MP3.
            throw DecoderError(url: url, reason: .notMPEGAudio("it is a RIFF/WAVE file with format tag \(Int(header[20]) | Int(header[21]) << 8)"))
        }
        return file
    }

    static func lastError(_ handle: OpaquePointer, fallback: String) -> String {
        let code = mpg123_errcode(handle)
        if code == MPG123_OK.rawValue || code == MPG123_DONE.rawValue { return fallback }
        return String(cString: mpg123_strerror(handle))
    }
}

/// Opens every item with ``MPG123Decoder``, in its own format or in `outputFormat`.
public struct MPG123DecoderFactory: DecoderFactory {
    /// The one format every item decodes to, or nil for each item's own.
    public let outputFormat: AudioFormat?

    public init(outputFormat: AudioFormat? = nil) {
        self.outputFormat = outputFormat
    }

    public func makeDecoder(for url: URL) throws(DecoderError) -> any Decoder {
        try MPG123Decoder(url: url, outputFormat: outputFormat)
    }
}
