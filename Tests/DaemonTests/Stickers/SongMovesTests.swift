import MPDProtocol
import Testing
@testable import DaemonCore

/// Which songs an update renamed and which it removed, for the stickers to follow.
@Suite("SongMoves")
struct SongMovesTests {
    private func record(_ uri: String, size: Int64 = 1000, nanoseconds: Int64 = 1, title: String = "T") -> SongDatabase.Record {
        SongDatabase.Record(uri: uri, modified: 1, modifiedNanoseconds: nanoseconds, size: size, duration: 2, format: nil,
                            tags: [.init(.title, title)])
    }

    private func database(_ records: [SongDatabase.Record]) -> SongDatabase {
        var database = SongDatabase(root: "/music")
        for record in records { database.records[record.uri] = record }
        return database
    }

    @Test func aFileRenamedKeepsItsIdentityAndMoves() {
        let before = database([record("a.mp3"), record("b.mp3", size: 2000), record("c.mp3", size: 3000)])
        let after = database([record("dir/a.mp3"), record("b.mp3", size: 2000)])
        #expect(SongMoves.between(before, after) == SongMoves(moves: [.init(from: "a.mp3", to: "dir/a.mp3")], removals: ["c.mp3"]))
    }

    @Test func aFileChangedOrAlikeAnotherIsRemovedNotMoved() {
        // Retagged on the way (another title): another song, as far as anyone can tell.
        #expect(SongMoves.between(database([record("a.mp3")]), database([record("b.mp3", title: "U")]))
                == SongMoves(removals: ["a.mp3"]))
        // Two files alike in size, time and tags: neither is taken for the other.
        #expect(SongMoves.between(database([record("a.mp3"), record("b.mp3")]), database([record("c.mp3"), record("d.mp3")]))
                == SongMoves(removals: ["a.mp3", "b.mp3"]))
        #expect(SongMoves.between(database([record("a.mp3")]), database([record("a.mp3"), record("b.mp3")])).isEmpty)
    }
}
