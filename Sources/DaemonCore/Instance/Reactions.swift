import Foundation
import Logging
import MPDProtocol
import Stickers

// What one part of the daemon does when another reports something: each reaction is a type of
// its own, made by ``Daemon`` with what it acts on, and tested alone (Tests/DaemonTests/Reactions).

/// A podcast episode downloaded or deleted (``FeedService``): the library and the queue follow.
///
/// iOS's handleEventsForBackgroundURLSession moment: a suspended daemon wakes into the
/// background, the library learns of the file (idle `update`, then `database`; the update is a
/// background task of its own), the queue gets it (`--auto-enqueue`), and the daemon may suspend
/// again once the update is done. A deleted episode leaves the queue (it is never the one
/// playing) and its directory is scanned again.
struct DownloadsIntoLibrary: Sendable {
    let partition: Partition
    let updater: LibraryUpdater
    /// What wakes a suspended daemon for the work.
    let wake: any BackgroundWaking
    /// `--auto-enqueue`: a downloaded episode is appended to the queue.
    let autoEnqueue: Bool
    /// The music directory the episodes' paths are in.
    let musicDirectory: URL?
    /// Each downloaded episode is measured (its loudness, for `loudness-target`); nil: not.
    var loudness: LoudnessScans? = nil
    let logger: Logger

    /// `relativePath` (in the music directory) was downloaded to `file`; from any thread.
    func downloaded(_ relativePath: String, file: URL) {
        partition.perform { [self] partition in
            let wake = wake.beginBackgroundWake(named: "transfer finished", allowance: 30, onExpiry: {})
            defer { wake.end() }
            do throws(MPDError) {
                _ = try updater.start(in: partition.application, uri: relativePath, rereadAll: false)
            } catch {
                logger.warning("cannot add \(relativePath) to the library: \(error.message)")
            }
            if autoEnqueue { partition.append([file]) }
            if let loudness {
                // A wake of its own: the daemon may suspend again only once the measurement is done.
                loudness.measure(file, inside: self.wake.beginBackgroundWake(named: "loudness scan", allowance: 60, onExpiry: {}))
            }
        }
    }

    /// `relativePath` was deleted (`--download-limit`); from any thread.
    func deleted(_ relativePath: String) {
        partition.perform { [self] partition in
            if let file = musicDirectory?.appendingPathComponent(relativePath).standardizedFileURL {
                partition.removeAll(playing: file)
            }
            do throws(MPDError) {
                _ = try updater.start(in: partition.application, uri: (relativePath as NSString).deletingLastPathComponent,
                                      rereadAll: false)
            } catch {
                logger.warning("cannot update the library after deleting \(relativePath): \(error.message)")
            }
        }
    }
}

/// Wakes a suspended daemon into the background for a while (``LifecycleCoordinator``).
protocol BackgroundWaking: Sendable {
    func beginBackgroundWake(named name: String, allowance: Double, onExpiry: @escaping @Sendable () -> Void) -> BackgroundActivity
}

extension LifecycleCoordinator: BackgroundWaking {}

/// The number of downloads running changed: `status` (``TransferCount``) and the status line
/// show it, so a kept `status` goes and the status line redraws.
struct TransfersShown: Sendable {
    let count: TransferCount
    let events: ControlEvents
    /// The status line, if drawn, and the partition whose queue it is drawn on.
    let statusLine: StatusLine?
    let partition: Partition

    /// `running` downloads now; from any thread.
    func changed(running: Int) {
        count.set(running)
        events.statusSnapshot.invalidate()
        if let statusLine { partition.perform { _ in statusLine.contentChanged() } }
    }
}

/// An `update` changed the library: the stickers follow it, a renamed file's to its new URI, a
/// removed song's deleted (mpd's `OnDatabaseSongRemoved`), while the sticker database is open.
struct StickersFollowLibrary: Sendable {
    let stickers: StickerDatabase
    let events: ControlEvents
    let logger: Logger

    /// On the partition's queue, after an update that changed the database.
    func libraryChanged(from previous: SongDatabase, to next: SongDatabase) {
        guard let store = stickers.openStore else { return }
        let (events, logger) = (events, logger)
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

/// A region entered whose waypoint has audio: the partition plays it over the queue.
struct RegionAnnouncements: Sendable {
    let partition: Partition

    /// The region `identifier` was entered (its waypoint, if the regions file has it); on the
    /// partition's queue, with the daemon woken for it.
    func entered(_ identifier: String, waypoint: RegionWaypoint?) {
        partition.assertOwned()
        if let audio = waypoint?.audio { partition.announce(audio, for: identifier) }
    }
}

/// An item the player could not play: the log says why, and `status` reports it as `error`.
struct PlaybackFailures: Sendable {
    let partition: Partition
    let logger: Logger

    /// `error` is the player's reason for `item`; from any thread.
    func failed(_ item: PlayerItemName?, error: String) {
        var error = error
        // A stream is named by its whole URL: `cannot play: http://host/path: why`.
        if let url = item?.url, StreamURL.isNetwork(url), !error.hasPrefix(url.absoluteString) {
            error = "\(url.absoluteString): \(error)"
        }
        let message = error
        logger.error("cannot play: \(message)")
        partition.perform { $0.lastError = message }
    }

    /// What names the item that failed.
    struct PlayerItemName: Sendable {
        let url: URL
    }
}
