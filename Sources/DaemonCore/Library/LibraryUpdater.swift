import Dispatch
import Foundation
import Logging
import MPDProtocol
import QueuePlayer
import Synchronization
#if canImport(CDispatch)
// For Glibc's `stat`/`timespec` fields under MemberImportVisibility (Package.swift says why).
import CDispatch
#endif

/// Keeps the ``SongDatabase`` of the music directory: loads it at start, and on `update`
/// (or `rescan`) walks the directory in a background task, off the partition's queue.
///
/// An update (of the whole library, or of one file or directory as `update URI` asks)
/// re-reads the tags only of files whose size or modification time changed (`rescan`: of
/// every file), keeps the rest, drops what vanished, and hands the new
/// database to the partition's queue in one piece; `database` is reported when anything
/// changed, and the database is saved (temporary file, rename) under the state directory.
/// A scan cut short by the background time is logged and its partial result discarded:
/// the next `update` does it again. At start, a saved database for the same music
/// directory is used as it is; without one, it is built quietly (``buildIfNeeded()``).
///
/// Confined to the partition's queue, but for the scan, which runs on a global utility queue.
/// `@unchecked Sendable`: its `var`s belong to `queue` (the partition's), which every entry
/// point asserts (`index`, `distinctValues`, `buildIfNeeded`, `start`, `runningJob`).
package final class LibraryUpdater: @unchecked Sendable {
    private let library: MusicLibrary
    private let songIndex: SongIndex
    private let events: ControlEvents
    private let queue: DispatchQueue
    private let logger: Logger
    private let file: URL?
    private var lastJob = 0
    /// The update that runs, and those queued behind it.
    private var current: Job?
    private var pending: [Job] = []
    /// Set when an `update` starts: the first build, if still running, stops (the update
    /// builds the same database), so two scans never compete.
    private let initialBuildSuperseded = Atomic<Bool>(false)
    /// Told of the library before and after each update that changed it, on the partition's
    /// queue (the stickers follow renamed songs and forget removed ones).
    private let follower: StickersFollowLibrary?

    /// The songs as the last finished update left them.
    private(set) var database: SongDatabase {
        didSet {
            prepared = nil
            columns = [:]
            version &+= 1
            prepareIndex()
        }
    }
    /// Counts the databases installed, so an index built for an older one is not taken.
    private var version = 0

    /// The queries' view of `database` (``LibraryIndex``): built in the background when the
    /// database is installed, or here by a query that comes before that is done.
    var index: LibraryIndex {
        dispatchPrecondition(condition: .onQueue(queue))
        if let prepared { return prepared }
        let built = LibraryIndex(database)
        prepared = built
        return built
    }
    private var prepared: LibraryIndex?

    /// Whether the index of the current database is ready without a query building it.
    var isIndexPrepared: Bool { prepared != nil }

    /// `database`'s songs sorted by URI, as `find`, `search` and `count` go through them.
    var songsInOrder: [SongDatabase.Record] { index.songs }

    /// The song blocks of ``songsInOrder``, index for index.
    var blocksInOrder: [SongBlock] { index.blocks }

    /// Builds the index of the database just installed on a utility queue, and hands it to
    /// the partition's queue unless another database was installed meanwhile.
    private func prepareIndex() {
        let (database, version) = (database, version)
        DispatchQueue.global(qos: .utility).async { [self] in
            let built = LibraryIndex(database)
            queue.async { [self] in
                if self.version == version && prepared == nil { prepared = built }
            }
        }
    }

    /// `list KEY [FILTER] [group TAG...]` (``SongDatabase/distinctValues``). With at most one
    /// group, as clients ask (ncmpcpp's media library, `mpc list album group albumartist`),
    /// it works on the keys' ``TagColumn``s, built at the first use after the database
    /// changed and kept.
    func distinctValues(of key: FilterKey, filter: SongFilter?, groups: [FilterKey]) -> [[String]] {
        dispatchPrecondition(condition: .onQueue(queue))
        guard groups.count <= 1 else { return database.distinctValues(of: key, filter: filter, groups: groups) }
        return TagColumn.distinctRows(of: column(key), groupedBy: groups.first.map(column),
                                      songs: songsInOrder, filter: filter)
    }

    private func column(_ key: FilterKey) -> TagColumn {
        if let known = columns[key] { return known }
        let built = TagColumn(key: key, songs: songsInOrder)
        columns[key] = built
        return built
    }
    private var columns: [FilterKey: TagColumn] = [:]

    /// - Parameters:
    ///   - file: where the database is kept (nil: not kept, as with `--no-state`).
    ///   - follower: what follows each update that changed the library.
    package init(library: MusicLibrary, songIndex: SongIndex, events: ControlEvents, queue: DispatchQueue, logger: Logger, file: URL?,
         follower: StickersFollowLibrary? = nil) {
        self.follower = follower
        self.library = library
        self.songIndex = songIndex
        self.events = events
        self.queue = queue
        self.logger = logger
        self.file = file
        database = Self.load(file, root: library.root.path) ?? SongDatabase(root: library.root.path)
        prepareIndex()
    }

    /// The job number while an update runs (`updating_db:` in `status`).
    var runningJob: Int? {
        dispatchPrecondition(condition: .onQueue(queue))
        return current?.number
    }


    /// Builds the database if none was saved, quietly: no job number, no idle event (a
    /// client that connects meanwhile finds it filling). It runs as a background task of
    /// `application`, so a daemon suspended meanwhile stops it (the next `update` builds).
    /// Call once, on the partition's queue.
    package func buildIfNeeded(in application: any ApplicationContext) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard database.updated == 0 else { return }
        let activity = application.beginBackgroundActivity(named: "build the song database")
        DispatchQueue.global(qos: .utility).async { [self] in
            let built = scan(nil, keeping: SongDatabase(root: library.root.path), rereadAll: true) {
                activity.isExpired || initialBuildSuperseded.load(ordering: .relaxed)
            }
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

    /// Queues an update of `uri` (nil: the whole library) as a background task of
    /// `application`; returns its job number. Updates run one after the other, each on the
    /// database the previous one left, as MPD's update queue runs them (at most 32 waiting).
    func start(in application: any ApplicationContext, uri: String? = nil, rereadAll: Bool) throws(MPDError) -> Int {
        dispatchPrecondition(condition: .onQueue(queue))
        guard pending.count < Self.maxQueuedJobs else { throw MPDError(.updateAlready, "Update queue is full") }
        lastJob += 1
        initialBuildSuperseded.store(true, ordering: .relaxed)
        let activity = application.beginBackgroundActivity(named: "update")
        pending.append(Job(number: lastJob, uri: uri.map(SongDatabase.trimmed), rereadAll: rereadAll, activity: activity))
        if current == nil {
            // MPD reports `update` when a job starts at once; a queued job's start is not reported.
            events.post([.update])
            runNext()
        }
        return lastJob
    }

    /// MPD's `MAX_UPDATE_QUEUE_SIZE`.
    static let maxQueuedJobs = 32

    private struct Job {
        let number: Int
        /// The file or directory to update, trimmed; nil or empty: everything.
        let uri: String?
        let rereadAll: Bool
        let activity: BackgroundActivity
    }

    /// Starts the first queued job, if none runs. On the partition's queue.
    private func runNext() {
        guard current == nil, !pending.isEmpty else { return }
        let job = pending.removeFirst()
        current = job
        let previous = database
        // Part of a library that was never built would be all of the database: build all of it.
        let uri = previous.updated == 0 ? nil : job.uri
        DispatchQueue.global(qos: .utility).async { [self] in
            let scanned = scan(uri, keeping: previous, rereadAll: job.rereadAll) { job.activity.isExpired }
            if let scanned, scanned != previous { save(scanned) }
            queue.async { [self] in
                current = nil
                if let scanned {
                    let changed = scanned.records != previous.records
                    database = scanned
                    if changed { follower?.libraryChanged(from: previous, to: scanned) }
                    events.post(changed ? [.database, .update] : [.update])
                } else {
                    logger.warning("update \(job.number) stopped early: the background time ran out; run update again")
                    events.post([.update])
                }
                job.activity.end()
                runNext()
            }
        }
    }

    // MARK: - Scanning (global queue)

    /// A new database: `previous` with the songs at or under `uri` (nil or empty: all songs)
    /// replaced by what the directory holds there now. Records of unchanged files are kept
    /// (unless `rereadAll`), the others read anew. Nil if `isCancelled` turned true first.
    private func scan(_ uri: String?, keeping previous: SongDatabase, rereadAll: Bool, isCancelled: () -> Bool) -> SongDatabase? {
        var next = SongDatabase(root: library.root.path)
        let files: [URL]?
        if let uri, !uri.isEmpty {
            next.records = previous.records.filter { $0.key != uri && !$0.key.hasPrefix(uri + "/") }
            files = library.files(toUpdate: uri, isCancelled: isCancelled)
        } else {
            files = library.allFiles(isCancelled: isCancelled)
        }
        guard let files else { return nil }
        for url in files {
            if isCancelled() { return nil }
            var info = stat()
            guard stat(url.path, &info) == 0 else { continue }
            let uri = library.uri(for: url)
            let version = FileIdentity(info)
            let (modified, nanoseconds, size) = (Int64(info.st_mtim.tv_sec), version.modified, version.size)
            if !rereadAll, let known = previous.records[uri], known.modifiedNanoseconds == nanoseconds, known.size == size {
                next.records[uri] = known
                continue
            }
            var record = Self.record(uri: uri, modified: modified, size: size, details: songIndex.details(of: url))
            record.modifiedNanoseconds = nanoseconds
            next.records[uri] = record
        }
        next.updated = Int64(Date().timeIntervalSince1970)
        return next
    }

    static func record(uri: String, modified: Int64, size: Int64, details: SongDetails?) -> SongDatabase.Record {
        SongDatabase.Record(uri: uri, modified: modified, size: size, duration: details?.duration, format: details?.formatText,
                            tags: details?.tags ?? [])
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
