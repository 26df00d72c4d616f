/// A source of PCM for one item: the decoder-plugin seam.
///
/// A decoder is opened (and its format and length learned) off the render
/// thread; the render thread then only calls ``decode(into:maximumFrames:)``
/// and, for seeks, ``seek(toFrame:)``. Neither may allocate or log on success.
public protocol Decoder: AnyObject, Sendable {
    /// The PCM format every call of ``decode(into:maximumFrames:)`` produces.
    var format: AudioFormat { get }

    /// The exact number of frames the item decodes to (encoder delay and padding removed).
    var frameCount: Int64 { get }

    /// Tags read from the file.
    var metadata: ItemMetadata { get }

    /// Decodes up to `maximumFrames` frames into `buffer`; returns the frames
    /// produced, 0 at the end of the item.
    func decode(into buffer: UnsafeMutableRawBufferPointer, maximumFrames: Int) throws(DecoderError) -> Int

    /// Moves the read position to `frame` (0 is the first audible frame).
    func seek(toFrame frame: Int64) throws(DecoderError)
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

import struct Foundation.URL
