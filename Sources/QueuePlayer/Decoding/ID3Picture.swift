import CMPG123
import Foundation

/// A picture embedded in a file's ID3v2 tag (an `APIC` frame), read with libmpg123.
///
/// Pictures are not read when a file is opened for playing or for its tags: libmpg123
/// keeps them only with `MPG123_PICTURE`, and a cover can be megabytes. This opens the
/// file once more, just far enough for the ID3v2 tag at its start.
public struct ID3Picture: Sendable, Hashable {
    /// The MIME type the frame names (`image/jpeg`); empty if it names none.
    public var mimeType: String
    /// The ID3v2 picture type (3: front cover).
    public var type: Int
    public var data: [UInt8]

    public init(mimeType: String, type: Int, data: [UInt8]) {
        self.mimeType = mimeType
        self.type = type
        self.data = data
    }

    /// The first picture of the file at `url`, as MPD's `readpicture` takes the first; nil
    /// if it has none. Throws if the file cannot be opened (missing, not a regular file) or
    /// holds no MPEG audio.
    public static func first(in url: URL) throws(DecoderError) -> ID3Picture? {
        let file = try BufferedFile.open(url)
        // libmpg123 reads through `file` until the handle is closed (the defers run in reverse).
        defer { withExtendedLifetime(file) {} }
        MPG123Decoder.initializeLibrary
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else {
            throw DecoderError(url: url, reason: .unreadable("libmpg123: \(String(cString: mpg123_plain_strerror(error)))"))
        }
        defer { mpg123_delete(handle) }
        let flags = Int(MPG123_PICTURE.rawValue | MPG123_QUIET.rawValue)
        mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), flags, 0)
        mpg123_replace_reader_handle(handle, BufferedFile.read, BufferedFile.seek, nil)
        guard file.open(handle) else {
            throw DecoderError(url: url, reason: .unreadable(String(cString: mpg123_strerror(handle))))
        }
        defer { mpg123_close(handle) }
        // Finding the first MPEG frame parses the ID3v2 tag in front of it. A file without
        // one is no song (MPD: "Failed to load file"), whatever tag it may carry.
        var rate = 0, channels: Int32 = 0, encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue else {
            throw DecoderError(url: url, reason: .notMPEGAudio("no MPEG audio frame found"))
        }

        var v1: UnsafeMutablePointer<mpg123_id3v1>?
        var v2: UnsafeMutablePointer<mpg123_id3v2>?
        guard mpg123_id3(handle, &v1, &v2) == MPG123_OK.rawValue, let tag = v2?.pointee, tag.pictures > 0 else {
            return nil
        }
        for index in 0..<Int(tag.pictures) {
            let picture = tag.picture[index]
            let mimeType = withUnsafePointer(to: picture.mime_type) { ID3Tags.values(of: $0) }.first ?? ""
            // MPD skips a picture given by URL (MIME type `-->`) and empty ones.
            guard mimeType != "-->", let data = picture.data, picture.size > 0 else { continue }
            return ID3Picture(mimeType: mimeType, type: Int(picture.type),
                              data: Array(UnsafeBufferPointer(start: data, count: picture.size)))
        }
        return nil
    }
}
