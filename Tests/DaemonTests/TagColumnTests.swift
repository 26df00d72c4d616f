import MPDProtocol
import TestSupport
import Testing
@testable import DaemonCore

/// `list` through tag columns gives exactly the rows of the plain string-set algorithm.
@Suite struct TagColumnTests {
    /// A database whose songs have zero to three values of each tag, drawn from small pools
    /// (so values repeat across songs), some with AlbumArtist and some falling back to Artist.
    static func database(songs: Int, seed: UInt64) -> SongDatabase {
        var generator = SplitMix64(seed: seed)
        let pool = ["", "Ä", "a", "B", "b", "Zoë", "zz", "Björn", "10", "9", "東京", "Москва"]
        var database = SongDatabase(root: "/music")
        for number in 0..<songs {
            var tags: [SongInfo.Tag] = []
            for type in [TagType.artist, .albumArtist, .album, .genre, .date] {
                for _ in 0..<Int.random(in: 0...(type == .albumArtist ? 1 : 3), using: &generator) {
                    tags.append(SongInfo.Tag(type, pool.randomElement(using: &generator)!))
                }
            }
            let uri = "d\(number % 7)/song\(number).mp3"
            database.records[uri] = SongDatabase.Record(uri: uri, modified: Int64(number), size: 1, duration: 1,
                                                        format: nil, tags: tags)
        }
        return database
    }

    @Test(arguments: [1, 2, 3])
    func columnsListTheSameRowsAsTheStringSets(seed: UInt64) throws {
        let database = Self.database(songs: 400, seed: seed)
        let songs = database.sorted
        let keys: [FilterKey] = [.tag(.album), .tag(.albumArtist), .tag(.artist), .tag(.genre), .tag(.date),
                                 .tag(.composer), .file]
        let filters: [SongFilter?] = [nil, try SongFilter(arguments: ["(Genre == 'b')"], foldCase: false),
                                      try SongFilter(arguments: ["any", "z"], foldCase: true)]
        for key in keys {
            for group in [nil] + keys {
                for filter in filters {
                    let expected = database.distinctValues(of: key, filter: filter, groups: group.map { [$0] } ?? [])
                    let columns = TagColumn.distinctRows(of: TagColumn(key: key, songs: songs),
                                                         groupedBy: group.map { TagColumn(key: $0, songs: songs) },
                                                         songs: songs, filter: filter)
                    #expect(columns == expected, "list \(key) group \(String(describing: group)) \(filter?.arguments ?? [])")
                }
            }
        }
    }

    @Test func aSongWithoutTheTagCountsAsTheEmptyValue() {
        var database = SongDatabase(root: "/music")
        database.records["a.mp3"] = SongDatabase.Record(uri: "a.mp3", modified: 0, size: 1, duration: 1, format: nil,
                                                        tags: [SongInfo.Tag(.album, "X")])
        database.records["b.mp3"] = SongDatabase.Record(uri: "b.mp3", modified: 0, size: 1, duration: 1, format: nil, tags: [])
        let songs = database.sorted
        let rows = TagColumn.distinctRows(of: TagColumn(key: .tag(.album), songs: songs),
                                          groupedBy: TagColumn(key: .tag(.albumArtist), songs: songs), songs: songs, filter: nil)
        #expect(rows == [["", ""], ["", "X"]])
    }
}
