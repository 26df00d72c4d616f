import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import MPDProtocol

/// Whether the daemon keeps stickers, as the partition knows it: off (`--sticker-file off`),
/// open, not made yet, or wanted but not to be had (the file is not a database, or cannot be
/// created): then the daemon runs on and each sticker command is refused, as mpd refuses them
/// when it has no `sticker_file`, with the reason the log gave.
enum StickerAvailability: Sendable {
    case off
    case failed(reason: String)
    case open(StickerStore)
    /// The default file beside the state, which does not exist yet: it is made by the first
    /// sticker command (``Partition/stickerStore()``), so that a daemon nobody asks for
    /// stickers writes nothing (`--no-state` leaves no state directory behind).
    case deferred(URL)

    /// The store, or the ACK that a sticker command gets without one (mpd: `ACK [5@0] {sticker}
    /// sticker database is disabled`).
    func store() throws(MPDError) -> StickerStore {
        switch self {
        case .open(let store): return store
        case .off, .deferred: throw MPDError(.unknown, "sticker database is disabled")
        case .failed(let reason): throw MPDError(.unknown, "sticker database is disabled: \(reason)")
        }
    }
}

extension StickerAvailability {
    /// Opens the database at `file` (nil: `--sticker-file off`) on a utility queue, so the
    /// start-up's thread does no file I/O, and logs what came of it: a file that cannot be
    /// opened is an error in the log, and the daemon runs on without stickers.
    ///
    /// - Parameter createDirectory: `file` is the default one beside the state: its directory
    ///   is the daemon's to make, and while the file does not exist it is left to the first
    ///   sticker command to make (``deferred(_:)``).
    static func open(_ file: URL?, createDirectory: Bool, logger: Logger) async -> StickerAvailability {
        guard let file else {
            logger.debug("stickers: off (--sticker-file off)")
            return .off
        }
        return await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                if createDirectory, !FileManager.default.fileExists(atPath: file.path) {
                    logger.info("stickers: \(file.path) (made at the first sticker command)")
                    return continuation.resume(returning: .deferred(file))
                }
                continuation.resume(returning: openNow(file, createDirectory: createDirectory, logger: logger))
            }
        }
    }

    static func openNow(_ file: URL, createDirectory: Bool, logger: Logger) -> StickerAvailability {
        if createDirectory {
            try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
        }
        do throws(StickerStoreError) {
            let store = try StickerStore(file: file)
            if store.isWritable {
                logger.info("stickers: \(file.path)")
            } else {
                logger.warning("stickers: \(file.path) is read-only: sticker get, list and find work, set and delete are refused")
            }
            return .open(store)
        } catch {
            logger.error("stickers: cannot use \(file.path): \(error.description); the daemon runs without stickers (each sticker command is refused) until the file is repaired or moved away, or --sticker-file names another")
            return .failed(reason: error.description)
        }
    }
}

extension Partition {
    /// The sticker store for a sticker command: the deferred file is made now (on the
    /// partition's queue, which waits for SQLite during a sticker command anyway).
    func stickerStore() throws(MPDError) -> StickerStore {
        if case .deferred(let file) = stickers {
            useStickers(StickerAvailability.openNow(file, createDirectory: true, logger: logger))
        }
        return try stickers.store()
    }

    /// Takes the sticker database, and lets it follow what each update does to the songs:
    /// a renamed file's stickers move to its new URI, a removed song's are deleted (mpd's
    /// `OnDatabaseSongRemoved`). On the partition's queue.
    func useStickers(_ stickers: StickerAvailability) {
        self.stickers = stickers
        guard case .open(let store) = stickers else { return }
        let (events, logger) = (events, logger)
        updater.updateFinished = { previous, next in
            store.follow({ SongMoves.between(previous, next) }) { result in
                switch result {
                case .success(let (changes, rows)):
                    if rows > 0 {
                        logger.info("stickers: followed \(changes.moves.count) renamed and \(changes.removals.count) removed songs (\(rows) stickers)")
                        events.post([.sticker])
                    }
                case .failure(let error):
                    logger.error("stickers: cannot follow the update: \(error.description)")
                }
            }
        }
    }
}
