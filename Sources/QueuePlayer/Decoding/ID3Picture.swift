import CMPG123
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A picture embedded in a file's ID3v2 tag (an `APIC` frame): its MIME type, picture type,
/// length and where its bytes lie in the file, not the bytes.
///
/// A picture may be hundreds of megabytes (a hostile file's), and MPD's `readpicture` asks for
/// it in chunks of at most `binarylimit` bytes. So finding it reads only the tag's frame
/// headers and the picture's own header (``ID3v2Tag``), and ``read(from:at:count:)`` reads
/// one chunk with one `pread`: a call costs the chunk, whatever the picture's size. The
/// bytes come from the file as it is when they are read: a caller that keeps a picture
/// across calls keeps it only while the file is the same version.
///
/// It takes the picture libmpg123 would have given (it read them before): the first `APIC`
/// frame of an ID3v2.3 or 2.4 tag (libmpg123 does not read v2.2's `PIC`), skipping frames
/// libmpg123 skips (compressed, encrypted), a picture given by URL (MIME type `-->`) and an
/// empty one, as MPD does. Where the frame is unsynchronised (its `FF 00` pairs stand for
/// `FF`), the bytes cannot be found by offset: such a frame is read whole and resynchronised
/// at each call, and only up to ``unsynchronisedLimit`` (larger ones are skipped). A picture
/// header whose description does not end within ``headerLimit`` bytes is skipped too.
public struct ID3Picture: Sendable, Hashable {
    /// The MIME type the frame names (`image/jpeg`); empty if it names none.
    public var mimeType: String
    /// The ID3v2 picture type (3: front cover).
    public var type: Int
    /// The picture's length in bytes (`readpicture`'s `size`).
    public var length: Int
    /// Where the picture's bytes are.
    let location: Location

    enum Location: Sendable, Hashable {
        /// At this offset of the file, as they are.
        case file(offset: Int64)
        /// In the unsynchronised frame data of `count` bytes at `offset`: the picture starts
        /// `skip` bytes into that data once resynchronised.
        case unsynchronised(offset: Int64, count: Int, skip: Int)
    }

    /// The most unsynchronised frame data read whole to serve one call (ID3 writers of today
    /// do not unsynchronise; the ones that did wrote covers well under this).
    static let unsynchronisedLimit = 1 << 20
    /// How far into a picture frame its header (encoding, MIME type, picture type,
    /// description) is looked for: one read of at most this, whatever the frame's size.
    static let headerLimit = 64 * 1024

    init(mimeType: String, type: Int, length: Int, location: Location) {
        self.mimeType = mimeType
        self.type = type
        self.length = length
        self.location = location
    }

    /// The first picture of the file at `url`, as MPD's `readpicture` takes the first; nil
    /// if it has none. Throws if the file cannot be opened (missing, not a regular file) or
    /// holds no MPEG audio.
    public static func first(in url: URL) throws(DecoderError) -> ID3Picture? {
        let file = try BufferedFile.open(url)
        try requireAudio(in: file, url: url)
        // A tag that cannot be walked (or none) holds no picture, as libmpg123 gave none.
        guard let tag = try? ID3v2Tag.read(file), tag.major >= 3 else { return nil }
        var found: ID3Picture?
        // A bad frame after the picture does not matter; one before it ends the walk, as in libmpg123.
        try? tag.walk(file) { frame in
            guard frame.id == "APIC", !ID3v2Tag.isSkippedByLibmpg123(frame) else { return true }
            found = picture(in: frame, of: tag, file: file)
            return found == nil
        }
        return found
    }

    /// Up to `count` bytes of the picture from `offset` (fewer at its end, or if the file was
    /// cut meanwhile): one `pread` of at most `count` bytes at the picture's offset in the file
    /// at `url` (an unsynchronised frame: at most ``unsynchronisedLimit``).
    public func read(from url: URL, at offset: Int, count: Int) throws(DecoderError) -> [UInt8] {
        let wanted = max(0, min(count, length - offset))
        guard wanted > 0 else { return [] }
        let file = try BufferedFile.open(url)
        switch location {
        case .file(let start):
            guard let bytes = file.read(at: start + Int64(offset), count: wanted) else {
                throw DecoderError(url: url, reason: .unreadable("cannot read the picture"))
            }
            return bytes
        case .unsynchronised(let start, let raw, let skip):
            guard let bytes = file.read(at: start, count: raw) else {
                throw DecoderError(url: url, reason: .unreadable("cannot read the picture"))
            }
            let data = ID3v2Tag.resynchronised(bytes)
            let from = min(data.count, skip + offset)
            return Array(data[from..<min(data.count, from + wanted)])
        }
    }

    // MARK: - Private

    /// Throws unless libmpg123 finds an MPEG frame in the file: a file without one is no song
    /// (MPD: "Failed to load file"), whatever tag it may carry. libmpg123 reads through
    /// `file`, so it is shown a big tag without its pictures (``BufferedFile``).
    private static func requireAudio(in file: BufferedFile, url: URL) throws(DecoderError) {
        MPG123Decoder.initializeLibrary
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else {
            throw DecoderError(url: url, reason: .unreadable("libmpg123: \(String(cString: mpg123_plain_strerror(error)))"))
        }
        defer { mpg123_delete(handle) }
        mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_QUIET.rawValue), 0)
        mpg123_replace_reader_handle(handle, BufferedFile.read, BufferedFile.seek, nil)
        // libmpg123 reads through `file` until the handle is closed (the defers run in reverse).
        guard file.open(handle) else {
            throw DecoderError(url: url, reason: .unreadable(String(cString: mpg123_strerror(handle))))
        }
        defer { mpg123_close(handle) }
        var rate = 0, channels: Int32 = 0, encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue else {
            throw DecoderError(url: url, reason: .notMPEGAudio("no MPEG audio frame found"))
        }
    }

    /// The picture of an `APIC` frame, nil if it has none to give (see the type's comment).
    private static func picture(in frame: ID3v2Tag.Frame, of tag: ID3v2Tag, file: BufferedFile) -> ID3Picture? {
        let (offset, size) = tag.content(of: frame)
        guard size > 0 else { return nil }
        // libmpg123 resynchronises a frame if the tag or the frame (v2.4's bit, in any version) says so.
        if tag.isUnsynchronised || frame.flags & 0x0002 != 0 {
            guard size <= unsynchronisedLimit, let raw = file.read(at: offset, count: Int(size)), raw.count == Int(size) else {
                return nil
            }
            let data = ID3v2Tag.resynchronised(raw)
            guard let header = header(of: data[...]), data.count > header.length, header.mimeType != "-->" else { return nil }
            return ID3Picture(mimeType: header.mimeType, type: header.type, length: data.count - header.length,
                              location: .unsynchronised(offset: offset, count: raw.count, skip: header.length))
        }
        let wanted = Int(min(size, Int64(headerLimit)))
        guard let head = file.read(at: offset, count: wanted), head.count == wanted,
              let header = header(of: head[...]), size > Int64(header.length), header.mimeType != "-->" else { return nil }
        return ID3Picture(mimeType: header.mimeType, type: header.type, length: Int(size) - header.length,
                          location: .file(offset: offset + Int64(header.length)))
    }

    /// The picture header at the start of `bytes` (text encoding, Latin-1 MIME type ending in
    /// NUL, picture type, description ending in NUL, or in two aligned NULs in UTF-16), and
    /// its length; nil if it does not end within `bytes` or names an unknown encoding.
    static func header(of bytes: ArraySlice<UInt8>) -> (mimeType: String, type: Int, length: Int)? {
        let start = bytes.startIndex
        guard let encoding = bytes.first, encoding <= 3,
              let mimeEnd = bytes[(start + 1)...].firstIndex(of: 0), mimeEnd + 1 < bytes.endIndex else { return nil }
        let mimeType = String(String.UnicodeScalarView(bytes[(start + 1)..<mimeEnd].map { Unicode.Scalar($0) }))
        let type = Int(bytes[mimeEnd + 1])
        let description = mimeEnd + 2
        var end: Int
        if encoding == 1 || encoding == 2 {
            end = description
            while end + 1 < bytes.endIndex && !(bytes[end] == 0 && bytes[end + 1] == 0) { end += 2 }
            guard end + 1 < bytes.endIndex else { return nil }
            end += 2
        } else {
            guard description <= bytes.endIndex, let zero = bytes[description...].firstIndex(of: 0) else { return nil }
            end = zero + 1
        }
        return (mimeType, type, end - start)
    }
}
