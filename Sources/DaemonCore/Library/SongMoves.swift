import MPDProtocol
import Stickers

/// How an update's moves and removals are found: see ``SongMoves``.
extension SongMoves {
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
