import Foundation
import MPDProtocol
import QueuePlayer

/// Which ID3 frame is which MPD tag, and how MPD writes its value: MPD's `Id3Scan.cxx`
/// (frame ids and their order) and `AddTagHandler` (`Track` and `Disc` as plain numbers).
///
/// The order of ``frames`` is the order MPD scans the frames in, which is the order its
/// song blocks list the tags (`Artist`, ..., `Title`, `Album`, `Track`, `Date`, `Genre`).
enum ID3TagMapping {
    /// ID3v2 text frames, in MPD's order. `TYER` is ID3v2.3's year, which libid3tag turns
    /// into `TDRC` for MPD; it is read only when there is no `TDRC` (see ``tags(of:)``).
    static let frames: [(id: String, tag: TagType)] = [
        ("TPE1", .artist), ("TPE2", .albumArtist), ("TSOP", .artistSort), ("TSOA", .albumSort),
        ("TSO2", .albumArtistSort), ("TIT2", .title), ("TALB", .album), ("TRCK", .track),
        ("TDRC", .date), ("TDOR", .originalDate), ("TCON", .genre), ("TCOM", .composer),
        ("TPE3", .conductor), ("TPE4", .performer), ("TIT1", .grouping), ("TPOS", .disc), ("TPUB", .label),
    ]

    /// TXXX descriptions MPD reads (`musicbrainz_txxx_tags`).
    static let extras: [String: TagType] = [
        "ALBUMARTISTSORT": .albumArtistSort,
        "MusicBrainz Artist Id": .musicBrainzArtistID,
        "MusicBrainz Album Id": .musicBrainzAlbumID,
        "MusicBrainz Album Artist Id": .musicBrainzAlbumArtistID,
        "MusicBrainz Track Id": .musicBrainzTrackID,
        "MusicBrainz Release Track Id": .musicBrainzReleaseTrackID,
        "MusicBrainz Work Id": .musicBrainzWorkID,
    ]

    /// The MPD tags of a file's ID3 tags, in the order song blocks list them. ID3v1 counts
    /// only for a file without ID3v2 text frames, as MPD reads one tag or the other.
    static func tags(of id3: ID3Tags) -> [SongInfo.Tag] {
        var result: [SongInfo.Tag] = []
        func add(_ type: TagType, _ raw: String) {
            let value = normalized(raw, for: type)
            if !value.isEmpty { result.append(SongInfo.Tag(type, value)) }
        }
        if id3.frames.isEmpty, let v1 = id3.version1 {
            for (type, value) in [(TagType.artist, v1.artist), (.title, v1.title), (.album, v1.album),
                                  (.track, v1.track.map(String.init)), (.date, v1.year)] {
                if let value { add(type, value) }
            }
            return result
        }
        let hasTDRC = id3.frames.contains { $0.id == "TDRC" }
        for (id, type) in frames {
            let values = id == "TDRC" && !hasTDRC ? id3.values(of: "TYER") : id3.values(of: id)
            for value in values { add(type, value) }
        }
        for extra in id3.extras {
            guard let type = extras[extra.description] else { continue }
            for value in extra.values { add(type, value) }
        }
        return result
    }

    /// The value as MPD stores it: white space stripped; `Track` and `Disc` as the number
    /// without leading zeros and without what follows it (`03/12` is `3`).
    static func normalized(_ value: String, for type: TagType) -> String {
        let stripped = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard type == .track || type == .disc else { return stripped }
        return String(stripped.drop { $0 == "0" }.prefix { $0.isASCII && $0.isNumber })
    }

    /// The comment pairs `readcomments` sends (MPD's `PrintCommentHandler` over libid3tag's
    /// `TXXX` frames): the description and the first value of each, in the order of the file.
    /// libid3tag turns a line break of such a value into a space; then MPD leaves out a name
    /// that is not letters, `_` and `-` (starting with a letter) and a value with any other
    /// control character. `COMM` frames are not pairs (MPD reads them as the `Comment` tag).
    static func comments(of id3: ID3Tags) -> [(name: String, value: String)] {
        id3.extras.compactMap { extra in
            let name = extra.description.replacingOccurrences(of: "\n", with: " ")
            guard let first = extra.values.first else { return nil }
            let value = first.replacingOccurrences(of: "\n", with: " ")
            guard isCommentName(name), !value.utf8.contains(where: { $0 < 0x20 }) else { return nil }
            return (name, value)
        }
    }

    private static func isCommentName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isLetter(first) else { return false }
        return name.utf8.allSatisfy { isLetter($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }
}
