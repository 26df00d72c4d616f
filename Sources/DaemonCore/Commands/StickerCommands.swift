#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import MPDProtocol

/// Stickers on songs (MPD's `StickerCommands.cxx`): `sticker get|set|delete|list|find song`,
/// with mpd 0.23's replies and errors, in its order: `sticker database is disabled` (code 5)
/// before anything else, then the arguments (``StickerRequest``), then `No such song` (code
/// 50) for a URI the library does not have, then `no such sticker` (code 50).
///
/// `find` lists only the songs the library has (mpd skips the others in silence), then takes
/// the `window`, so a page is full when there are songs enough. A change posts `sticker` to
/// the idle clients. The SQLite work runs on the store's own queue while the partition's
/// queue waits for it (``StickerStore``); a failure there is logged and answered with code 5
/// and SQLite's words, and the daemon runs on.
struct StickerCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .sticker,
    ]

    let stickers: StickerDatabase
    /// The database a song must be in.
    let updater: LibraryUpdater
    let events: ControlEvents
    let logger: Logger

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        guard case .sticker(let arguments) = command else { return nil }
        let store = try stickers.store()
        let request = try StickerRequest.parse(arguments)
        var reply = Reply()
        switch request {
        case .get(let uri, let name):
            try requireSong(uri)
            // mpd stores an empty value but cannot tell it from none when reading it back.
            guard let value = try sql(store, { () throws(StickerStoreError) in try store.value(uri: uri, name: name) }),
                  !value.isEmpty else { throw Self.noSuchSticker }
            reply.append("sticker", "\(name)=\(value)")
        case .list(let uri):
            try requireSong(uri)
            for (name, value) in try sql(store, { () throws(StickerStoreError) in try store.stickers(uri: uri) }) {
                reply.append("sticker", "\(name)=\(value)")
            }
        case .set(let uri, let name, let value):
            try requireSong(uri)
            if try sql(store, { () throws(StickerStoreError) in try store.set(uri: uri, name: name, value: value) }) {
                events.post([.sticker])
            }
        case .delete(let uri, let name):
            try requireSong(uri)
            guard try sql(store, { () throws(StickerStoreError) in try store.delete(uri: uri, name: name) }) else {
                throw Self.noSuchSticker
            }
            events.post([.sticker])
        case .find(let query):
            let songs = updater.database.records
            let found = try sql(store, { () throws(StickerStoreError) in try store.find(query) }).filter { songs[$0.uri] != nil }
            let window = query.window.map { window in
                let start = min(window.start, found.count)
                return start..<max(start, min(window.end ?? found.count, found.count))
            } ?? found.indices
            for (uri, value) in found[window] {
                reply.append("file", uri)
                reply.append("sticker", "\(query.name)=\(value)")
            }
        }
        return reply
    }

    static let noSuchSticker = MPDError(.noExist, "no such sticker")

    /// mpd's `Database::GetSong`: the URI of a song the library has, else `No such song`.
    private func requireSong(_ uri: String) throws(MPDError) {
        guard updater.database.records[uri] != nil else { throw MPDError.noSuchSong }
    }

    /// Runs a store call; a failure is logged and becomes an ACK with SQLite's words.
    private func sql<T>(_ store: StickerStore, _ body: () throws(StickerStoreError) -> T) throws(MPDError) -> T {
        do {
            return try body()
        } catch {
            logger.error("sticker database \(store.file.path): \(error.description)")
            throw MPDError(.unknown, "sticker database: \(error.description)")
        }
    }
}
