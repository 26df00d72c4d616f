/// A source of PCM for one item: the decoder-plugin seam.
///
/// A decoder is opened (and its format and length learned) off the render
/// thread; the render thread then only calls ``decode(into:maximumFrames:)``
/// and, for seeks, ``seek(toFrame:)``. Neither may allocate or log on success.
public protocol Decoder: AnyObject, Sendable {
    /// The PCM format every call of ``decode(into:maximumFrames:)`` produces.
    var format: AudioFormat { get }

    /// The exact number of frames the item decodes to (encoder delay and padding removed);
    /// 0 while ``knownFrameCount`` is nil.
    var frameCount: Int64 { get }

    /// The item's length in frames as far as it is known: a file's exact length; a stream's
    /// as its header announces it (learnt with its first frame), nil for a live stream or
    /// before that frame. Default: ``frameCount``.
    var knownFrameCount: Int64? { get }

    /// True for a decoder whose bytes arrive while it plays (a network stream): the render
    /// thread asks its ``availability(waitingToMinimizeStalls:)`` before decoding. Default: false.
    var isStreaming: Bool { get }

    /// Render thread, streaming decoders: whether decoding may start or resume now. With
    /// `waitingToMinimizeStalls`, only once enough is buffered to play on (AVPlayer's
    /// `isPlaybackLikelyToKeepUp`); else as soon as anything is. `.ready` also when the data
    /// ended or failed (decoding then ends or throws). No lock, no allocation. Default: `.ready`.
    func availability(waitingToMinimizeStalls: Bool) -> DecoderAvailability

    /// True after a ``decode(into:maximumFrames:)`` that stopped for want of data, not at the
    /// item's end (it returned what it had, possibly 0). Default: false.
    var isStarved: Bool { get }

    /// Render thread, streaming decoders: about to wait for data; the source's next bytes
    /// wake the render thread (through the wake-up its player set on ``streamSource``'s
    /// buffer). False if there is something to go on with already. Default: false.
    func willWaitForData() -> Bool

    /// The network source this decoder reads, for its item's buffering properties. Default: nil.
    var streamSource: (any StreamSource)? { get }

    /// Tags read from the file.
    var metadata: ItemMetadata { get }

    /// The file's ReplayGain values (``ReplayGainInfo``); nil by default.
    var replayGain: ReplayGainInfo? { get }

    /// Decodes up to `maximumFrames` frames into `buffer`; returns the frames
    /// produced, 0 at the end of the item.
    func decode(into buffer: UnsafeMutableRawBufferPointer, maximumFrames: Int) throws(DecoderError) -> Int

    /// Moves the read position to `frame` (0 is the first audible frame).
    func seek(toFrame frame: Int64) throws(DecoderError)
}

/// Whether a streaming decoder can decode now (``Decoder/availability(waitingToMinimizeStalls:)``).
public enum DecoderAvailability: Sendable, Hashable {
    /// Decode (the data may also have ended or failed: decoding says so).
    case ready
    /// Not enough bytes yet: wait for the source.
    case buffering
}

extension Decoder {
    public var knownFrameCount: Int64? { frameCount }
    public var isStreaming: Bool { false }
    public func availability(waitingToMinimizeStalls: Bool) -> DecoderAvailability { .ready }
    public var isStarved: Bool { false }
    public func willWaitForData() -> Bool { false }
    public var streamSource: (any StreamSource)? { nil }
    public var replayGain: ReplayGainInfo? { nil }
}

/// Opens decoders for items: lets tests and future formats plug in.
public protocol DecoderFactory: Sendable {
    /// Opens `url` for decoding, or explains why it cannot be played.
    func makeDecoder(for url: URL) throws(DecoderError) -> any Decoder
}

/// Descriptive tags of an item, as far as the file carries them.
public struct ItemMetadata: Sendable, Hashable {
    public var title: String?
    public var artist: String?
    public var album: String?
    public var track: String?
    public var date: String?
    public var genre: String?

    public init(title: String? = nil, artist: String? = nil, album: String? = nil,
                track: String? = nil, date: String? = nil, genre: String? = nil) {
        self.title = title
        self.artist = artist
        self.album = album
        self.track = track
        self.date = date
        self.genre = genre
    }

    /// The common tags of an ID3 tag: ID3v2's frames, or ID3v1's fields where those are missing.
    public init(_ id3: ID3Tags) {
        self.init(title: id3.values(of: "TIT2").first ?? id3.version1?.title,
                  artist: id3.values(of: "TPE1").first ?? id3.version1?.artist,
                  album: id3.values(of: "TALB").first ?? id3.version1?.album,
                  track: id3.values(of: "TRCK").first,
                  date: (id3.values(of: "TDRC") + id3.values(of: "TYER")).first,
                  genre: id3.values(of: "TCON").first)
    }
}

#if canImport(FoundationEssentials)
import struct FoundationEssentials.URL
#else
import struct Foundation.URL
#endif
