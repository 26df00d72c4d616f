import MPDProtocol

/// What the database's queries read, derived from one version of it: the songs in MPD's
/// order and their song blocks, index for index.
///
/// Sorting 10,000 URIs the way mpd orders them costs about 100 ms, and rendering their
/// blocks a few tens more: far more than a search. Done on the partition's queue at the
/// first query after an update, that held every client and the player's control for as
/// long; ``LibraryUpdater`` builds the index on a utility queue as soon as a database is
/// installed, and a query that comes first builds it itself, as before.
///
/// Immutable, so `Sendable`: it is built on one thread and handed to the partition's.
final class LibraryIndex: Sendable {
    /// The songs sorted by URI (``SongDatabase/sorted``), as `find`, `search`, `count` and
    /// `listall` go through them.
    let songs: [SongDatabase.Record]
    /// The song block of each of ``songs`` (``SongBlock``): a search that matches thousands
    /// of songs copies their text instead of formatting each again.
    let blocks: [SongBlock]

    init(_ database: SongDatabase) {
        songs = database.sorted
        blocks = songs.map { SongBlock($0.info) }
    }
}
