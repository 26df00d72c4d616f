import MPDProtocol

/// What an update did to the songs that the stickers must follow: files that were renamed or
/// moved, and files that left the library.
///
/// mpd keys stickers by URI and deletes a song's when the song leaves its database, so a
/// renamed file loses them. Here a song that left and a song that came in the same update
/// with the same size, the same modification time to the nanosecond (which `mv` keeps),
/// the same duration and the same tags are taken for one file renamed, and its stickers
/// move to the new URI; when several files are alike in all that, none is taken for another
/// (their stickers go, as mpd's would). What an update of one directory cannot see (a file
/// moved out of the directory updated) is what mpd loses too.
struct SongMoves: Sendable, Equatable {
    struct Move: Sendable, Equatable {
        let from: String
        let to: String
    }

    var moves: [Move] = []
    /// The URIs of the songs gone, in URI order.
    var removals: [String] = []

    var isEmpty: Bool { moves.isEmpty && removals.isEmpty }

    /// What stands for one file's contents when its name changes.
    private struct Identity: Hashable {
        let size: Int64
        let modifiedNanoseconds: Int64
        let duration: Double?
        let tags: [SongInfo.Tag]

        init(_ record: SongDatabase.Record) {
            size = record.size
            modifiedNanoseconds = record.modifiedNanoseconds
            duration = record.duration
            tags = record.tags
        }
    }

    /// The moves and removals between the library before an update and after it.
    static func between(_ previous: SongDatabase, _ next: SongDatabase) -> SongMoves {
        let gone = previous.records.values.filter { next.records[$0.uri] == nil }
        guard !gone.isEmpty else { return SongMoves() }
        let came = next.records.values.filter { previous.records[$0.uri] == nil }
        let goneByIdentity = Dictionary(grouping: gone, by: Identity.init)
        let cameByIdentity = Dictionary(grouping: came, by: Identity.init)
        var result = SongMoves()
        for (identity, records) in goneByIdentity {
            if records.count == 1, let arrivals = cameByIdentity[identity], arrivals.count == 1 {
                result.moves.append(Move(from: records[0].uri, to: arrivals[0].uri))
            } else {
                result.removals += records.map(\.uri)
            }
        }
        result.moves.sort { $0.from < $1.from }
        result.removals.sort()
        return result
    }
}
