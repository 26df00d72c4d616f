import CMPG123
import Foundation

/// The ID3 tags of a file as libmpg123 hands them over (`mpg123_id3`): every ID3v2 text
/// frame by its id, the TXXX frames by their description, and the ID3v1 fields.
///
/// Kept raw on purpose: which frame is which tag of which protocol (`TPE2` is MPD's
/// `AlbumArtist`, `TPOS` its `Disc`) is the business of whoever presents them, not of the
/// decoder. libmpg123 has already decoded every text to UTF-8, whatever the ID3v2 encoding;
/// a frame may hold several values (NUL-separated in ID3v2.4), kept apart here.
public struct ID3Tags: Sendable, Hashable {
    /// One ID3v2 text frame (`TIT2`, `TPE2`, `TPOS`, ...) with its values.
    public struct TextFrame: Sendable, Hashable {
        public var id: String
        public var values: [String]

        public init(id: String, values: [String]) {
            self.id = id
            self.values = values
        }
    }

    /// One user-defined text frame (`TXXX`): its description (`MusicBrainz Album Id`) and values.
    public struct ExtraFrame: Sendable, Hashable {
        public var description: String
        public var values: [String]

        public init(description: String, values: [String]) {
            self.description = description
            self.values = values
        }
    }

    /// The ID3v1 tag (the last 128 bytes of the file), with the ID3v1.1 track number.
    public struct Version1: Sendable, Hashable {
        public var title: String?
        public var artist: String?
        public var album: String?
        public var year: String?
        public var track: Int?
        /// The genre number of ID3v1's fixed list; nil for 255 ("none").
        public var genre: Int?

        public init(title: String? = nil, artist: String? = nil, album: String? = nil, year: String? = nil,
                    track: Int? = nil, genre: Int? = nil) {
            self.title = title
            self.artist = artist
            self.album = album
            self.year = year
            self.track = track
            self.genre = genre
        }
    }

    /// The ID3v2 text frames in the order of the file.
    public var frames: [TextFrame]
    /// The TXXX frames in the order of the file.
    public var extras: [ExtraFrame]
    public var version1: Version1?

    public init(frames: [TextFrame] = [], extras: [ExtraFrame] = [], version1: Version1? = nil) {
        self.frames = frames
        self.extras = extras
        self.version1 = version1
    }

    /// The values of the frames with `id`, in order.
    public func values(of id: String) -> [String] {
        frames.filter { $0.id == id }.flatMap(\.values)
    }

    // MARK: - Reading (libmpg123)

    /// What libmpg123 has parsed of `handle`'s tags so far (ID3v2 once the first frame is
    /// read, ID3v1 once the end was reached, e.g. by a scan).
    static func read(_ handle: OpaquePointer) -> ID3Tags {
        var v1: UnsafeMutablePointer<mpg123_id3v1>?
        var v2: UnsafeMutablePointer<mpg123_id3v2>?
        guard mpg123_id3(handle, &v1, &v2) == MPG123_OK.rawValue else { return ID3Tags() }
        var tags = ID3Tags()
        if let v2 = v2?.pointee {
            for index in 0..<Int(v2.texts) {
                let text = v2.text[index]
                let id = frameID(text.id)
                let found = withUnsafePointer(to: text.text) { Self.values(of: $0) }
                if !id.isEmpty && !found.isEmpty { tags.frames.append(TextFrame(id: id, values: found)) }
            }
            for index in 0..<Int(v2.extras) {
                let extra = v2.extra[index]
                let name = withUnsafePointer(to: extra.description) { Self.values(of: $0) }.first ?? ""
                let found = withUnsafePointer(to: extra.text) { Self.values(of: $0) }
                if !found.isEmpty { tags.extras.append(ExtraFrame(description: name, values: found)) }
            }
        }
        if let v1 = v1?.pointee, withUnsafeBytes(of: v1.tag, { Array($0) }) == Array("TAG".utf8) {
            // ID3v1.1: a zero byte before the comment's last byte makes that byte the track.
            let comment = withUnsafeBytes(of: v1.comment) { Array($0) }
            tags.version1 = Version1(
                title: latin1(v1.title), artist: latin1(v1.artist), album: latin1(v1.album), year: latin1(v1.year),
                track: comment[28] == 0 && comment[29] != 0 ? Int(comment[29]) : nil,
                genre: v1.genre == 255 ? nil : Int(v1.genre))
        }
        return tags
    }

    /// The values of an `mpg123_string`: `fill` counts the final NUL; values are NUL-separated.
    static func values(of string: UnsafePointer<mpg123_string>) -> [String] {
        let s = string.pointee
        guard let p = s.p, s.fill > 1 else { return [] }
        let bytes = UnsafeRawBufferPointer(start: p, count: s.fill - 1)
        return bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.filter { !$0.isEmpty }
    }

    private static func frameID<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// A fixed-size ID3v1 field: Latin-1, NUL- or space-padded.
    private static func latin1<T>(_ tuple: T) -> String? {
        withUnsafeBytes(of: tuple) { raw in
            let text = String(String.UnicodeScalarView(raw.prefix { $0 != 0 }.map { Unicode.Scalar($0) }))
                .trimmingCharacters(in: .whitespaces)
            return text.isEmpty ? nil : text
        }
    }
}
