import MPDProtocol
import QueuePlayer
import Testing
@testable import DaemonCore

/// Which ID3 frame is which MPD tag, and the values as MPD reports them.
@Suite struct ID3TagMappingTests {
    typealias Frame = ID3Tags.TextFrame

    static func mapped(_ id3: ID3Tags) -> [String] {
        ID3TagMapping.tags(of: id3).map { "\($0.type.protocolName): \($0.value)" }
    }

    @Test func framesBecomeMPDTagsInMPDsOrder() {
        let id3 = ID3Tags(frames: [
            Frame(id: "TIT2", values: ["First"]), Frame(id: "TPOS", values: ["1/2"]), Frame(id: "TCOM", values: ["J. S. Bach"]),
            Frame(id: "TPE2", values: ["Various Artists"]), Frame(id: "TRCK", values: ["03/12"]), Frame(id: "TPE1", values: ["Solo", "Guest"]),
            Frame(id: "TALB", values: ["Album"]), Frame(id: "TDRC", values: ["2021-05-04"]), Frame(id: "TCON", values: ["Baroque"]),
            Frame(id: "TSOP", values: ["Solo, The"]), Frame(id: "TPE3", values: ["Conductor"]), Frame(id: "TPUB", values: ["Label"]),
            Frame(id: "COMM", values: ["not a tag MPD lists"]), Frame(id: "TXXX", values: ["ignored"]),
        ], extras: [
            ID3Tags.ExtraFrame(description: "MusicBrainz Album Id", values: ["abc-123"]),
            ID3Tags.ExtraFrame(description: "Something else", values: ["x"]),
        ])
        #expect(Self.mapped(id3) == [
            "Artist: Solo", "Artist: Guest", "AlbumArtist: Various Artists", "ArtistSort: Solo, The", "Title: First",
            "Album: Album", "Track: 3", "Date: 2021-05-04", "Genre: Baroque", "Composer: J. S. Bach",
            "Conductor: Conductor", "Disc: 1", "Label: Label", "MUSICBRAINZ_ALBUMID: abc-123",
        ])
    }

    /// MPD's `AddTagHandler`: Track and Disc lose leading zeros and everything after the number.
    @Test(arguments: [("03/12", "3"), ("1/2", "1"), ("12", "12"), (" 7 ", "7"), ("007", "7"), ("2 of 3", "2"), ("0", ""), ("A1", "")])
    func trackAndDiscAreTheirNumber(raw: String, reported: String) {
        #expect(ID3TagMapping.normalized(raw, for: .track) == reported)
        #expect(ID3TagMapping.normalized(raw, for: .disc) == reported)
        #expect(ID3TagMapping.normalized(raw, for: .title) == raw.trimmingCharacters(in: .whitespaces), "other tags keep their text")
        let tags = ID3TagMapping.tags(of: ID3Tags(frames: [Frame(id: "TPOS", values: [raw])]))
        #expect(tags.map(\.value) == (reported.isEmpty ? [] : [reported]), "an empty value is no tag")
    }

    @Test func theID3v23YearIsTheDateUnlessThereIsAnID3v24One() {
        #expect(Self.mapped(ID3Tags(frames: [Frame(id: "TYER", values: ["1999"])])) == ["Date: 1999"])
        #expect(Self.mapped(ID3Tags(frames: [Frame(id: "TYER", values: ["1999"]), Frame(id: "TDRC", values: ["2001"])])) == ["Date: 2001"])
    }

    @Test func id3v1CountsOnlyWithoutID3v2() {
        let v1 = ID3Tags.Version1(title: "T1", artist: "A1", album: "B1", year: "1987", track: 4, genre: 17)
        #expect(Self.mapped(ID3Tags(version1: v1)) == ["Artist: A1", "Title: T1", "Album: B1", "Track: 4", "Date: 1987"])
        #expect(Self.mapped(ID3Tags(frames: [Frame(id: "TIT2", values: ["T2"])], version1: v1)) == ["Title: T2"])
    }

    /// `list albumartist` lists a song without AlbumArtist under its Artist (MPD's fallback).
    @Test func listingATagFallsBackAsMPDDoes() {
        var database = SongDatabase(root: "/music")
        func add(_ uri: String, _ tags: [(TagType, String)]) {
            database.records[uri] = SongDatabase.Record(uri: uri, modified: 0, size: 0, duration: 1, format: nil,
                                                        tags: tags.map { .init($0.0, $0.1) })
        }
        add("a.mp3", [(.artist, "Solo"), (.albumArtist, "Various Artists")])
        add("b.mp3", [(.artist, "Duo")])
        add("c.mp3", [(.title, "No artist at all")])
        #expect(database.distinctValues(of: .tag(.albumArtist), filter: nil, groups: []) == [[""], ["Duo"], ["Various Artists"]])
        #expect(database.distinctValues(of: .tag(.composer), filter: nil, groups: []) == [[""]])
    }
}
