import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import MPDProtocol
import Stickers
import Synchronization

/// Whether the daemon keeps stickers, as the partition knows it: off (`--sticker-file off`),
/// open, not made yet, or wanted but not to be had (the file is not a database, or cannot be
/// created): then the daemon runs on and each sticker command is refused, as mpd refuses them
/// when it has no `sticker_file`, with the reason the log gave.
package enum StickerAvailability: Sendable {
    case off
    case failed(reason: String)
    case open(StickerStore)
    /// The default file beside the state, which does not exist yet: it is made by the first
    /// sticker command (``StickerDatabase/store()``), so that a daemon nobody asks for
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

/// The daemon's sticker database (the ``Instance``'s): its ``StickerAvailability``, opened at
/// start (``open(_:createDirectory:)``) ahead of every client's command, or at the first sticker
/// command when the default file does not exist yet. `Sendable`: the availability belongs to
/// the partition's queue (`QueueBound`), and whether it is open is an atomic any thread reads.
package final class StickerDatabase: Sendable {
    private let availability: QueueBound<StickerAvailability>
    /// Whether the database is open (or will be at the first sticker command), readable from
    /// any thread: the event loop makes the sessions.
    private let isOpen: Atomic<Bool>
    private let queue: DispatchQueue
    private let logger: Logger

    /// `availability`: what the database is until ``open(_:createDirectory:)`` (off by default).
    package init(_ availability: StickerAvailability = .off, queue: DispatchQueue, logger: Logger) {
        self.availability = QueueBound(availability, on: queue)
        isOpen = Atomic(Self.counts(availability))
        self.queue = queue
        self.logger = logger
    }

    private static func counts(_ availability: StickerAvailability) -> Bool {
        switch availability {
        case .open, .deferred: true
        case .off, .failed: false
        }
    }

    /// Opens `file` (nil: off) off the partition's queue, then takes it there, ahead of any
    /// command queued after this call returns.
    package func open(_ file: URL?, createDirectory: Bool) async {
        let opened = await StickerAvailability.open(file, createDirectory: createDirectory, logger: logger)
        queue.async { [self] in use(opened) }
    }

    /// What `commands` leaves out (mpd lists `sticker` only with a sticker database); from any thread.
    var unavailableCommands: Set<String> { isOpen.load(ordering: .relaxed) ? [] : [Command.Kind.sticker.name] }

    /// The open store, if any, on the partition's queue.
    var openStore: StickerStore? {
        if case .open(let store) = availability.value { return store }
        return nil
    }

    /// The sticker store for a sticker command: the deferred file is made now (on the
    /// partition's queue, which waits for SQLite during a sticker command anyway).
    func store() throws(MPDError) -> StickerStore {
        if case .deferred(let file) = availability.value {
            use(StickerAvailability.openNow(file, createDirectory: true, logger: logger))
        }
        return try availability.value.store()
    }

    private func use(_ opened: StickerAvailability) {
        availability.value = opened
        isOpen.store(Self.counts(opened), ordering: .relaxed)
    }
}
