#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GRDB
import MPDProtocol
import NIOPosix

/// mpd's sticker database (`sticker_file`): name/value pairs that clients attach to songs
/// (ratings, play counts), in SQLite, with mpd's schema: one table `sticker(type, uri, name,
/// value)` and the unique index `sticker_value` on `(type, uri, name)`, so that a file written
/// by mpd 0.23 is read here and the other way round.
///
/// Every SQLite call runs on GRDB's `DatabaseQueue`, a serial queue of its own (labelled
/// `queueplayerd.stickers`): never on a NIO event loop nor on the render thread. The sticker
/// commands wait for it from the partition's queue, as mpd's main thread waits for its
/// SQLite; what the library update changes (``follow(_:completion:)``) is written
/// asynchronously. Errors are thrown as ``StickerStoreError`` with SQLite's words, never fatal.
///
/// Values are compared and sorted as mpd compares them: as text, byte by byte (the column is
/// `VARCHAR`, SQLite's `BINARY` collation), `value_int` by SQLite's `CAST(value AS INTEGER)`.
package final class StickerStore: Sendable {
    /// The SQLite file.
    package let file: URL
    private let database: DatabaseQueue

    /// Opens (or creates) the database at `file` and makes sure the table and its index exist.
    /// Throws if the file is not a database, cannot be created, or lacks the table and cannot be written.
    package init(file: URL) throws(StickerStoreError) {
        self.file = file
        var configuration = Configuration()
        configuration.label = "queueplayerd.stickers"
        // Another process (mpd, the sqlite3 shell) may hold the file for a moment.
        configuration.busyMode = .timeout(2)
        do {
            database = try DatabaseQueue(path: file.path, configuration: configuration)
            try database.inDatabase { db in
                // Only written when missing: a read-only file that has them opens.
                if try !db.tableExists("sticker") || !db.indexes(on: "sticker").contains(where: { $0.name == "sticker_value" }) {
                    try db.execute(sql: """
                        CREATE TABLE IF NOT EXISTS sticker(type VARCHAR NOT NULL, uri VARCHAR NOT NULL, \
                        name VARCHAR NOT NULL, value VARCHAR NOT NULL);
                        CREATE UNIQUE INDEX IF NOT EXISTS sticker_value ON sticker(type, uri, name);
                        """)
                }
            }
        } catch {
            throw StickerStoreError(error)
        }
    }

    /// Whether the file may be written (a read-only one answers `get`, `list` and `find`; `set`
    /// and `delete` fail with SQLite's "attempt to write a readonly database").
    package var isWritable: Bool { access(file.path, W_OK) == 0 }

    /// The value of the sticker `name` of the object, nil if it has none (mpd: also for an empty name).
    package func value(type: String = StickerRequest.songType, uri: String, name: String) throws(StickerStoreError) -> String? {
        guard !name.isEmpty else { return nil }
        return try run { db in
            try String.fetchOne(db, sql: "SELECT value FROM sticker WHERE type = ? AND uri = ? AND name = ?",
                                arguments: [type, uri, name])
        }
    }

    /// Every sticker of the object, by name (byte order, as mpd's `std::map` lists them).
    package func stickers(type: String = StickerRequest.songType, uri: String) throws(StickerStoreError) -> [(name: String, value: String)] {
        try run { db in
            try Row.fetchAll(db, sql: "SELECT name, value FROM sticker WHERE type = ? AND uri = ? ORDER BY name",
                             arguments: [type, uri]).map { ($0[0], $0[1]) }
        }
    }

    /// Sets (adds or replaces) a sticker; an empty name is ignored, as mpd ignores it.
    /// - Returns: whether the database changed.
    @discardableResult
    package func set(type: String = StickerRequest.songType, uri: String, name: String, value: String) throws(StickerStoreError) -> Bool {
        guard !name.isEmpty else { return false }
        return try run { db in
            try db.execute(sql: """
                INSERT INTO sticker(type, uri, name, value) VALUES (?, ?, ?, ?)
                ON CONFLICT(type, uri, name) DO UPDATE SET value = excluded.value
                """, arguments: [type, uri, name, value])
            return db.changesCount > 0
        }
    }

    /// Deletes one sticker of the object, or (`name` nil) all of them.
    /// - Returns: whether there was any to delete.
    package func delete(type: String = StickerRequest.songType, uri: String, name: String? = nil) throws(StickerStoreError) -> Bool {
        try run { db in
            if let name {
                try db.execute(sql: "DELETE FROM sticker WHERE type = ? AND uri = ? AND name = ?", arguments: [type, uri, name])
            } else {
                try db.execute(sql: "DELETE FROM sticker WHERE type = ? AND uri = ?", arguments: [type, uri])
            }
            return db.changesCount > 0
        }
    }

    /// The objects under `query.directory` that have the sticker `query.name` (with a value
    /// that compares as asked), in the order asked (else by URI), before any window: the
    /// caller drops the songs the library no longer has, then takes the window.
    package func find(type: String = StickerRequest.songType, _ query: StickerQuery) throws(StickerStoreError) -> [(uri: String, value: String)] {
        let prefix = query.uriPrefix
        var sql = "SELECT uri, value FROM sticker WHERE type = ? AND name = ? AND substr(uri, 1, length(?)) = ?"
        var arguments: StatementArguments = [type, query.name, prefix, prefix]
        if let match = query.match {
            sql += " AND value \(match.comparison.rawValue) ?"
            arguments += [match.value]
        }
        if let sort = query.sort {
            let key = switch sort.key {
            case .uri: "uri"
            case .value: "value"
            case .valueInt: "CAST(value AS INTEGER)"
            }
            sql += " ORDER BY \(key) \(sort.descending ? "DESC" : "ASC"), uri"
        } else {
            sql += " ORDER BY uri"
        }
        return try run { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { ($0[0], $0[1]) }
        }
    }

    /// Moves the stickers of songs whose file was renamed and deletes those of songs that left
    /// the library (mpd's `OnDatabaseSongRemoved`), in one transaction on the store's queue,
    /// asynchronously: `changes` is worked out there too. A sticker command sent after this
    /// call waits for it (the queue is serial), so no client sees the stickers before they
    /// follow. `completion` (on the store's queue) gets the changes and the rows changed.
    package func follow(_ changes: @escaping @Sendable () -> SongMoves,
                completion: @escaping @Sendable (Result<(changes: SongMoves, rows: Int), StickerStoreError>) -> Void) {
        let type = StickerRequest.songType
        database.asyncWrite({ db in
            let changes = changes()
            var rows = 0
            for move in changes.moves {
                // A sticker the new URI somehow had already (left from an earlier file there) gives way.
                try db.execute(sql: "UPDATE OR REPLACE sticker SET uri = ? WHERE type = ? AND uri = ?",
                               arguments: [move.to, type, move.from])
                rows += db.changesCount
            }
            for uri in changes.removals {
                try db.execute(sql: "DELETE FROM sticker WHERE type = ? AND uri = ?", arguments: [type, uri])
                rows += db.changesCount
            }
            return (changes, rows)
        }, completion: { _, result in
            completion(result.mapError(StickerStoreError.init))
        })
    }

    private func run<T>(_ body: (Database) throws -> T) throws(StickerStoreError) -> T {
        // The caller waits for the disk: never a NIO event loop (checked in debug builds).
        assert(MultiThreadedEventLoopGroup.currentEventLoop == nil, "a sticker statement on a NIO event loop")
        do {
            return try database.inDatabase(body)
        } catch {
            throw StickerStoreError(error)
        }
    }
}

/// Why the sticker database failed, in SQLite's words ("file is not a database", "attempt to
/// write a readonly database", "unable to open database file").
package struct StickerStoreError: Error, CustomStringConvertible {
    package let description: String

    init(_ error: any Error) {
        if let error = error as? DatabaseError {
            description = error.message ?? "\(error.resultCode)"
        } else {
            description = "\(error)"
        }
    }
}
