import Dispatch
import Foundation
import Logging
import MPDProtocol
import Synchronization

/// Keeps the ``SongDatabase`` of the music directory: loads it at start, and on `update`
/// (or `rescan`) walks the directory in a background task, off the controller's queue.
///
/// An update re-reads the tags only of files whose size or modification time changed
/// (`rescan`: of every file), keeps the rest, drops what vanished, and hands the new
/// database to the controller's queue in one piece; `database` is reported when anything
/// changed, and the database is saved (temporary file, rename) under the state directory.
/// A scan cut short by the background time is logged and its partial result discarded:
/// the next `update` does it again. At start, a saved database for the same music
/// directory is used as it is; without one, it is built quietly (``buildIfNeeded()``).
///
/// Confined to the controller's queue, but for the scan, which runs on a global utility queue.
final class LibraryUpdater: @unchecked Sendable {
    private let library: MusicLibrary
    private let songIndex: SongIndex
    private let events: ControlEvents
    private let queue: DispatchQueue
    private let logger: Logger
    private let file: URL?
    private var lastJob = 0
    private var running = false
    /// Set when an `update` starts: the first build, if still running, stops (the update
    /// builds the same database), so two scans never compete.
    private let initialBuildSuperseded = Atomic<Bool>(false)
    private let startedAt = Date()

    /// The songs as the last finished update left them.
    private(set) var database: SongDatabase

    /// - Parameter file: where the database is kept (nil: not kept, as with `--no-state`).
    init(library: MusicLibrary, songIndex: SongIndex, events: ControlEvents, queue: DispatchQueue, logger: Logger, file: URL?) {
        self.library = library
        self.songIndex = songIndex
        self.events = events
        self.queue = queue
        self.logger = logger
        self.file = file
        database = Self.load(file, root: library.root.path) ?? SongDatabase(root: library.root.path)
    }

    /// The job number while an update runs (`updating_db:` in `status`).
    var runningJob: Int? { running ? lastJob : nil }

    /// Seconds since the daemon started (`uptime` in `stats`).
    var uptime: Int { Int(Date().timeIntervalSince(startedAt)) }

    /// Builds the database if none was saved, quietly: no job number, no idle event (a
    /// client that connects meanwhile finds it filling). It runs as a background task of
    /// `application`, so a daemon suspended meanwhile stops it (the next `update` builds).
    /// Call once, on the controller's queue.
    func buildIfNeeded(in application: any ApplicationContext) {
        guard database.updated == 0 else { return }
        let activity = application.beginBackgroundActivity(named: "build the song database")
        DispatchQueue.global(qos: .utility).async { [self] in
            let built = scan(keeping: nil) { activity.isExpired || initialBuildSuperseded.load(ordering: .relaxed) }
            if let built { save(built) }
            queue.async { [self] in
                // An `update` that finished first has the newer picture.
                if let built, database.updated == 0 { database = built }
                if built == nil && !initialBuildSuperseded.load(ordering: .relaxed) {
                    logger.info("the song database was not built: the background time ran out; run update")
                }
                activity.end()
            }
        }
    }

    /// Starts an update as a background task of `application`; returns its job number.
    func start(in application: any ApplicationContext, rereadAll: Bool) -> Int {
        lastJob += 1
        let job = lastJob
        running = true
        initialBuildSuperseded.store(true, ordering: .relaxed)
        events.post([.update])
        let previous = database
        let activity = application.beginBackgroundActivity(named: "update")
        DispatchQueue.global(qos: .utility).async { [self] in
            let scanned = scan(keeping: rereadAll ? nil : previous) { activity.isExpired }
            if let scanned, scanned != previous { save(scanned) }
            queue.async { [self] in
                if lastJob == job { running = false }
                if let scanned {
                    let changed = scanned.records != previous.records
                    database = scanned
                    events.post(changed ? [.database, .update] : [.update])
                } else {
                    logger.warning("update \(job) stopped early: the background time ran out; run update again")
                    events.post([.update])
                }
                activity.end()
            }
        }
        return job
    }

    // MARK: - Scanning (global queue)

    /// A new database: records of unchanged files kept from `previous`, the others read
    /// anew. Nil if `isCancelled` turned true first.
    private func scan(keeping previous: SongDatabase?, isCancelled: () -> Bool) -> SongDatabase? {
        var next = SongDatabase(root: library.root.path)
        guard let files = library.allFiles(isCancelled: isCancelled) else { return nil }
        for url in files {
            if isCancelled() { return nil }
            var info = stat()
            guard stat(url.path, &info) == 0 else { continue }
            let uri = library.uri(for: url)
            let modified = Int64(info.st_mtim.tv_sec)
            let size = Int64(info.st_size)
            if let known = previous?.records[uri], known.modified == modified, known.size == size {
                next.records[uri] = known
                continue
            }
            next.records[uri] = Self.record(uri: uri, modified: modified, size: size, details: songIndex.details(of: url))
        }
        next.updated = Int64(Date().timeIntervalSince1970)
        return next
    }

    static func record(uri: String, modified: Int64, size: Int64, details: SongDetails?) -> SongDatabase.Record {
        SongDatabase.Record(uri: uri, modified: modified, size: size, duration: details?.duration, format: details?.formatText,
                            tags: (details?.tags ?? []).map { .init(type: $0.type.rawValue, value: $0.value) })
    }

    // MARK: - Saving and loading

    private func save(_ database: SongDatabase) {
        guard let file else { return }
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            let data = try JSONEncoder().encode(database)
            try data.write(to: file, options: .atomic)
        } catch {
            logger.warning("cannot save the song database to \(file.path): \(error.localizedDescription)")
        }
    }

    private static func load(_ file: URL?, root: String) -> SongDatabase? {
        guard let file, let data = FileManager.default.contents(atPath: file.path),
              let database = try? JSONDecoder().decode(SongDatabase.self, from: data),
              database.version == SongDatabase.currentVersion, database.root == root else { return nil }
        return database
    }
}
